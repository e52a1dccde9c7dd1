//! `/ws/events` over real WebSocket connections: job and dataset events arrive as they happen,
//! filters apply on the wire, 500 clients at once receive a burst of 10,000 events with none
//! lost, and a client that stops reading is dropped instead of holding memory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::time::{Duration, Instant};

use common::live::{connect, next_event, serve, upload_world};
use geomill::state::AppState;
use serde_json::{Value, json};

/// Waits until the bus has `count` subscribers (connections subscribe before their upgrade).
async fn until_subscribers(state: &AppState, count: usize) {
    let start = Instant::now();
    while state.events().subscribers() != count {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{} subscribers, not {count}",
            state.events().subscribers()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_and_datasets_announce_themselves() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let mut datasets = connect(address, "?topics=dataset_created,dataset_deleted").await;
    let mut jobs = connect(address, "?topics=job_created,job_completed").await;
    let client = reqwest::Client::new();
    let dataset = upload_world(address, dir.path()).await;
    let event = next_event(&mut datasets, Duration::from_secs(5))
        .await
        .expect("dataset_created");
    assert_eq!(event["type"], "dataset_created");
    assert_eq!(event["data"]["dataset_id"], dataset["id"]);
    assert!(
        event["timestamp"].is_string() && event["id"].is_u64(),
        "{event}"
    );

    let rule = json!({"name": "big", "dataset_id": dataset["id"], "rules": [{"name": "big", "capability": "filter", "params": {"input": "countries", "where": "pop_est > 100000000"}}]});
    let response = client
        .post(format!("http://{address}/jobs"))
        .json(&rule)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let job: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{job}");
    let created = next_event(&mut jobs, Duration::from_secs(5))
        .await
        .expect("job_created");
    assert_eq!(
        (created["type"].as_str(), &created["data"]["job_id"]),
        (Some("job_created"), &job["id"])
    );
    let completed = next_event(&mut jobs, Duration::from_secs(60))
        .await
        .expect("job_completed");
    assert_eq!(completed["type"], "job_completed", "{completed}");
    assert_eq!(completed["data"]["job_id"], job["id"]);
    assert!(completed["id"].as_u64() > created["id"].as_u64());

    let response = client
        .delete(format!(
            "http://{address}/api/portal/datasets/{}",
            dataset["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let deleted = next_event(&mut datasets, Duration::from_secs(5))
        .await
        .expect("dataset_deleted");
    assert_eq!(deleted["type"], "dataset_deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_apply_on_the_wire() {
    let (_dir, state) = common::test_state();
    let address = serve(&state).await;
    let mut parcels = connect(address, "?topics=trigger_fired&table=public.parcels").await;
    let mut roads = connect(address, "?table=public.roads").await;
    until_subscribers(&state, 2).await;
    state.events().publish(
        "trigger_fired",
        json!({"trigger_id": "t1", "table": "public.roads"}),
    );
    state.events().publish(
        "trigger_fired",
        json!({"trigger_id": "t1", "table": "public.parcels"}),
    );
    state
        .events()
        .publish("job_created", json!({"job_id": "j"}));
    let first = next_event(&mut parcels, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(first["data"]["table"], "public.parcels");
    assert!(
        next_event(&mut parcels, Duration::from_millis(300))
            .await
            .is_none(),
        "parcels saw more"
    );
    let got: Vec<Value> = vec![
        next_event(&mut roads, Duration::from_secs(5))
            .await
            .unwrap(),
        next_event(&mut roads, Duration::from_secs(5))
            .await
            .unwrap(),
    ];
    // Roads: its own table, and the job event (no table key: not excluded).
    assert_eq!(got[0]["data"]["table"], "public.roads");
    assert_eq!(got[1]["type"], "job_created");

    // An unknown topic is a 400 before any upgrade.
    let refused =
        tokio_tungstenite::connect_async(format!("ws://{address}/ws/events?topics=nope")).await;
    assert!(refused.is_err());
    let plain = reqwest::get(format!("http://{address}/ws/events?topics=nope"))
        .await
        .unwrap();
    assert_eq!(plain.status(), 400);
    let plain = reqwest::get(format!("http://{address}/ws/events"))
        .await
        .unwrap();
    assert_eq!(plain.status(), 426);
}

const CLIENTS: usize = 500;
const BURST: u64 = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_clients_receive_a_burst_of_ten_thousand_events() {
    let (_dir, state) = common::test_state();
    let address = serve(&state).await;
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(connect(address, "").await);
    }
    until_subscribers(&state, CLIENTS).await;
    let readers: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut ids = Vec::with_capacity(BURST as usize);
                while (ids.len() as u64) < BURST {
                    let event = next_event(&mut client, Duration::from_secs(120))
                        .await
                        .expect("an event");
                    ids.push(event["id"].as_u64().unwrap());
                }
                ids
            })
        })
        .collect();
    let started = Instant::now();
    for index in 0..BURST {
        state.events().publish(
            "layer_updated",
            json!({"table": "public.burst", "n": index}),
        );
    }
    for reader in readers {
        let ids = reader.await.unwrap();
        assert_eq!(ids.len() as u64, BURST);
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "ids in order, none missing"
        );
    }
    eprintln!(
        "{CLIENTS} clients × {BURST} events delivered in {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped() {
    let (_dir, state) = common::test_state();
    let address = serve(&state).await;
    // The stalled client: a tiny receive buffer, and it never reads.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(address).await.unwrap();
    let (stalled, _) = tokio_tungstenite::client_async(format!("ws://{address}/ws/events"), stream)
        .await
        .unwrap();
    let mut fast = connect(address, "").await;
    until_subscribers(&state, 2).await;
    let padding = "x".repeat(1_000);
    let total = 40_000_u64;
    let reader = tokio::spawn(async move {
        let mut received = 0_u64;
        while received < total {
            next_event(&mut fast, Duration::from_secs(60))
                .await
                .expect("fast client event");
            received += 1;
        }
        received
    });
    for index in 0..total {
        state
            .events()
            .publish("layer_updated", json!({"n": index, "padding": padding}));
        if index % 1000 == 0 {
            tokio::task::yield_now().await;
        }
    }
    assert_eq!(reader.await.unwrap(), total, "the fast client lost nothing");
    // The stalled one was let go: its subscription is gone (its ring slots are free).
    until_subscribers(&state, 0).await;
    drop(stalled);
}
