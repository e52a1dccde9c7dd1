//! Triggers on PostgreSQL tables, end to end: change tracking installed on a table, a row
//! INSERTed by `psql` (a real client in its own process) reaches the WebSocket clients
//! filtered on that table — and only them — when it intersects the reference table; the
//! webhook receives the event signed with HMAC-SHA256 (after a retry); and the LISTEN loop
//! survives PostgreSQL restarting, processing the rows written meanwhile.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::time::Duration;

use common::live::{connect, next_event, send, serve};
use common::postgis::{OwnCluster, psql};
use geomill::config::Config;
use geomill::state::AppState;
use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SECRET: &str = "webhook secret for the test";

/// A webhook receiver on loopback: answers 503 to the first request and 200 to the others,
/// and hands over each request's signature header and body.
async fn webhook_receiver() -> (
    u16,
    tokio::sync::mpsc::UnboundedReceiver<(Option<String>, Vec<u8>)>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut requests = 0;
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut data = Vec::new();
            let mut buffer = [0u8; 4096];
            let (head, body) = loop {
                let n = socket.read(&mut buffer).await.unwrap();
                data.extend_from_slice(&buffer[..n]);
                if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&data[..end]).to_string();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    while data.len() < end + 4 + length {
                        let n = socket.read(&mut buffer).await.unwrap();
                        data.extend_from_slice(&buffer[..n]);
                    }
                    break (head, data[end + 4..end + 4 + length].to_vec());
                }
                assert!(n > 0, "connection closed early");
            };
            requests += 1;
            let status = if requests == 1 {
                "503 Service Unavailable"
            } else {
                "200 OK"
            };
            let answer =
                format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            socket.write_all(answer.as_bytes()).await.unwrap();
            let signature = head.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("x-geomill-signature")
                    .then(|| value.trim().to_owned())
            });
            if requests > 1 {
                sender.send((signature, body)).unwrap();
            }
        }
    });
    (port, receiver)
}

fn hmac_hex(body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    ring::hmac::sign(&key, body)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn point(x: f64, y: f64) -> String {
    format!("ST_SetSRID(ST_MakePoint({x}, {y}), 4326)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_inserted_with_psql_fires_the_trigger_of_its_table_only() {
    let cluster = OwnCluster::start();
    let dsn = cluster.dsn();
    psql(
        &dsn,
        "CREATE TABLE public.zones (id serial PRIMARY KEY, geom geometry(Polygon, 4326));
        INSERT INTO public.zones (geom) VALUES (ST_MakeEnvelope(0, 0, 10, 10, 4326));
        CREATE TABLE public.sites (id serial PRIMARY KEY, name text, geom geometry(Point, 4326));
        CREATE TABLE public.depots (id serial PRIMARY KEY, name text, geom geometry(Point, 4326));",
    );
    let (hook_port, mut hooks) = webhook_receiver().await;

    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::with_data_dir(dir.path());
    config.postgis_dsn = Some(dsn.clone());
    config.allowed_url_hosts = vec![format!("127.0.0.1:{hook_port}")];
    config.trigger_webhook_secret = Some(SECRET.to_owned());
    let state = AppState::open(config).unwrap();
    let address = serve(&state).await;
    let url = |path: &str| format!("http://{address}{path}");

    // `sites` is tracked by name here; `depots` by the trigger written on it below.
    for table in ["sites"] {
        let tracked = geomill::triggers::tracking::enable_table(&state, "public", table, None)
            .await
            .unwrap();
        assert_eq!(tracked.key_column.as_deref(), Some("id"));
        assert_eq!(tracked.geometry_column.as_deref(), Some("geom"));
    }
    let trigger = |table: &str, webhook: Option<String>| {
        json!({"name": format!("{table} in a zone"), "event": "FEATURE_CREATED", "trigger_type": "DML",
               "table": format!("public.{table}"),
               "predicates": [{"type": "geom", "op": "intersects", "ref_table": "public.zones"}],
               "actions": [{"action_type": "NOTIFY", "config": {"message": format!("a {table} row in a zone"), "webhook": webhook}}]})
    };
    let (status, sites_trigger) = send(
        Method::POST,
        url("/triggers"),
        Some(trigger(
            "sites",
            Some(format!("http://127.0.0.1:{hook_port}/hook")),
        )),
    )
    .await;
    assert_eq!(status, 201, "{sites_trigger}");
    let (status, _) = send(
        Method::POST,
        url("/triggers"),
        Some(trigger("depots", None)),
    )
    .await;
    assert_eq!(status, 201);
    let (status, refused) = send(Method::POST, url("/triggers"), Some(json!({"name": "x", "event": "FEATURE_CREATED", "table": "sites", "actions": [{"action_type": "NOTIFY"}]}))).await;
    assert_eq!(status, 422, "{refused}");
    let mut missing = trigger("nowhere", None);
    missing["table"] = json!("public.nowhere");
    let (status, refused) = send(Method::POST, url("/triggers"), Some(missing)).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["error"]["detail"]["errors"][0]["path"], "table",
        "{refused}"
    );
    let tracked = state
        .postgres_store()
        .unwrap()
        .tracked_tables()
        .await
        .unwrap();
    let names: Vec<&str> = tracked.iter().map(|t| t.table.as_str()).collect();
    assert_eq!(
        names,
        ["public.depots", "public.sites"],
        "the trigger on depots tracks it"
    );

    let mut sites = connect(address, "?topics=trigger_fired&table=public.sites").await;
    let mut depots = connect(address, "?topics=trigger_fired&table=public.depots").await;

    // Inside the zone: the sites client hears of it within a second.
    psql(
        &dsn,
        &format!(
            "INSERT INTO public.sites (name, geom) VALUES ('inside', {})",
            point(5.0, 5.0)
        ),
    );
    let event = next_event(&mut sites, Duration::from_secs(1))
        .await
        .expect("trigger_fired within 1 s");
    let data = &event["data"];
    assert_eq!(event["type"], "trigger_fired");
    assert_eq!(
        (&data["table"], &data["op"], &data["event"]),
        (
            &json!("public.sites"),
            &json!("INSERT"),
            &json!("FEATURE_CREATED")
        ),
        "{event}"
    );
    assert_eq!(
        (&data["trigger_id"], &data["fid"]),
        (&sites_trigger["id"], &json!("1")),
        "{event}"
    );
    assert_eq!(data["message"], "a sites row in a zone");

    // The webhook got the same event, signed, on its second attempt.
    let (signature, body) = tokio::time::timeout(Duration::from_secs(30), hooks.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(signature, Some(format!("sha256={}", hmac_hex(&body))));
    let delivered: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (&delivered["type"], &delivered["data"]["fid"]),
        (&json!("trigger_fired"), &json!("1")),
        "{delivered}"
    );

    // Outside the zone: nothing fires; the next event the sites client gets is the row after.
    psql(
        &dsn,
        &format!(
            "INSERT INTO public.sites (name, geom) VALUES ('outside', {})",
            point(50.0, 50.0)
        ),
    );
    psql(
        &dsn,
        &format!(
            "INSERT INTO public.sites (name, geom) VALUES ('inside again', {})",
            point(6.0, 6.0)
        ),
    );
    let event = next_event(&mut sites, Duration::from_secs(30))
        .await
        .expect("trigger_fired");
    assert_eq!(
        event["data"]["fid"], "3",
        "the row outside fired nothing: {event}"
    );

    // The depots client heard nothing of the sites: its first event is a depot's.
    psql(
        &dsn,
        &format!(
            "INSERT INTO public.depots (name, geom) VALUES ('depot', {})",
            point(1.0, 1.0)
        ),
    );
    let event = next_event(&mut depots, Duration::from_secs(30))
        .await
        .expect("trigger_fired");
    assert_eq!(event["data"]["table"], "public.depots", "{event}");

    // PostgreSQL restarts: rows written meanwhile are processed once the loop is back.
    cluster.stop();
    cluster.resume();
    let id = psql(
        &dsn,
        &format!(
            "INSERT INTO public.sites (name, geom) VALUES ('after the restart', {}) RETURNING id",
            point(7.0, 7.0)
        ),
    );
    let event = next_event(&mut sites, Duration::from_secs(60))
        .await
        .expect("trigger_fired after the restart");
    assert_eq!(event["data"]["fid"], json!(id), "{event}");
    let engine = state.postgres_store().unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let tracked = engine.tracked_tables().await.unwrap();
        if tracked.iter().all(|t| t.pending == 0) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "changes left unconsumed: {tracked:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Disabled tracking: rows are no longer logged.
    assert!(engine.disable_tracking("public", "sites").await.unwrap());
    psql(
        &dsn,
        &format!(
            "INSERT INTO public.sites (name, geom) VALUES ('untracked', {})",
            point(8.0, 8.0)
        ),
    );
    let tracked = engine.tracked_tables().await.unwrap();
    assert_eq!(tracked.len(), 1, "{tracked:?}");
    assert!(engine.pending_changes(10).await.unwrap().is_empty());
}
