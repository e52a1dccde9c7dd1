//! Schedules: both request forms, validation, edits and run-now; and a schedule every minute
//! firing on a real minute: one job per tick, `schedule_fired` and the job's events on the bus.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::time::Duration;

use common::live::{assert_unprocessable, connect, next_event, send, serve, upload_world};
use serde_json::{Value, json};

async fn world(dir: &std::path::Path, address: std::net::SocketAddr) -> String {
    let dataset = upload_world(address, dir).await;
    dataset["id"].as_str().unwrap().to_owned()
}

fn filter_job(dataset: &str) -> Value {
    json!({"dataset_id": dataset, "rules": [{"name": "big", "capability": "filter", "params": {"input": "countries", "where": "pop_est > 100000000"}}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_written_checked_edited_and_run_now() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let dataset = world(dir.path(), address).await;
    let url = |path: &str| format!("http://{address}{path}");
    use reqwest::Method;

    // The `schedule` + `pipeline` form, with an engine.
    let pipeline = json!({"steps": [{"id": "big", "capability": "filter", "input": "countries", "params": {"where": "pop_est > 100000000"}}]});
    let (status, created) = send(Method::POST, url("/schedules"), Some(json!({"name": "nightly", "schedule": "30 2 * * *", "pipeline": pipeline, "dataset_id": dataset, "engine": "embedded"}))).await;
    assert_eq!(status, 201, "{created}");
    assert!(
        created["next_run_at"]
            .as_str()
            .unwrap()
            .contains("T02:30:00"),
        "{created}"
    );
    assert_eq!(created["job"]["engine"], "embedded");
    assert_eq!(created["job"]["name"], "nightly");
    let id = created["id"].as_str().unwrap().to_owned();

    // Refusals name the problem.
    for (body, expected) in [
        (
            json!({"cron": "0 * * * * *", "job": filter_job(&dataset)}),
            "6 fields",
        ),
        (
            json!({"cron": "99 * * * *", "job": filter_job(&dataset)}),
            "cron",
        ),
        (
            json!({"job": filter_job(&dataset)}),
            "cron (or schedule) is required",
        ),
        (json!({"cron": "* * * * *"}), "exactly one of"),
        (
            json!({"cron": "* * * * *", "pipeline_id": "r1"}),
            "needs dataset_id",
        ),
        (
            json!({"cron": "* * * * *", "pipeline": "/etc/rules.yaml"}),
            "PipelineSpec object",
        ),
        (
            json!({"cron": "* * * * *", "job": filter_job(&dataset), "notify": {"webhook": "https://example.org"}}),
            "not implemented",
        ),
        (
            json!({"cron": "* * * * *", "job": filter_job("00000000-0000-4000-8000-000000000000")}),
            "dataset",
        ),
    ] {
        let (status, answer) = send(Method::POST, url("/schedules"), Some(body.clone())).await;
        assert_unprocessable(status, &answer, expected, &body);
    }
    let (_, listed) = send(Method::GET, url("/schedules"), None).await;
    assert_eq!(listed["total"], 1, "refused schedules are not stored");

    // Disabled: no next time; enabled again: one.
    let (status, edited) = send(
        Method::PATCH,
        url(&format!("/schedules/{id}")),
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, 200, "{edited}");
    assert!(edited["next_run_at"].is_null());
    let (_, edited) = send(
        Method::PATCH,
        url(&format!("/schedules/{id}")),
        Some(json!({"enabled": true, "cron": "0 3 * * 1"})),
    )
    .await;
    assert!(
        edited["next_run_at"]
            .as_str()
            .unwrap()
            .contains("T03:00:00"),
        "{edited}"
    );

    // Run now: a job, recorded on the schedule; the cron times stay.
    let (status, ran) = send(Method::POST, url(&format!("/schedules/{id}/run-now")), None).await;
    assert_eq!(status, 202, "{ran}");
    let job_id = ran["last_job_id"].as_str().unwrap().to_owned();
    assert_eq!(ran["next_run_at"], edited["next_run_at"]);
    let (status, job) = send(Method::GET, url(&format!("/jobs/{job_id}")), None).await;
    assert_eq!(status, 200);
    assert_eq!(job["name"], "nightly");

    let (status, _) = send(Method::DELETE, url(&format!("/schedules/{id}")), None).await;
    assert_eq!(status, 200);
    let (status, _) = send(Method::GET, url(&format!("/schedules/{id}")), None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_every_minute_fires_once_per_tick() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    tokio::spawn(geomill::schedules::ticker::run(state.clone()));
    let dataset = world(dir.path(), address).await;
    let mut events = connect(address, "?topics=schedule_fired,job_created,job_completed").await;
    let mut body = filter_job(&dataset);
    body["name"] = json!("minutely");
    let (status, created) = send(
        reqwest::Method::POST,
        format!("http://{address}/schedules"),
        Some(json!({"name": "minutely", "cron": "* * * * *", "job": body})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let schedule_id = created["id"].as_str().unwrap().to_owned();

    // Within the next minute boundary (and a little): the job is created, the schedule fires
    // (announced once the job exists), the job completes.
    let mut received = Vec::new();
    let fired = loop {
        let event = next_event(&mut events, Duration::from_secs(75))
            .await
            .expect("schedule events");
        received.push(event.clone());
        if event["type"] == "schedule_fired" {
            break event;
        }
    };
    assert_eq!(
        fired["data"]["schedule_id"],
        schedule_id.as_str(),
        "{fired}"
    );
    assert_eq!(fired["data"]["manual"], false);
    let job_id = fired["data"]["job_id"].as_str().unwrap().to_owned();
    while !received
        .iter()
        .any(|e| e["type"] == "job_completed" && e["data"]["job_id"] == job_id.as_str())
    {
        received.push(
            next_event(&mut events, Duration::from_secs(60))
                .await
                .expect("job_completed"),
        );
    }
    let created = received
        .iter()
        .filter(|e| e["type"] == "job_created")
        .count();
    assert_eq!(created, 1, "one job per tick: {received:?}");
    assert_eq!(received[0]["data"]["job_id"], job_id.as_str());

    // One job for the tick, and the schedule already points at the next minute.
    let (_, jobs) = send(reqwest::Method::GET, format!("http://{address}/jobs"), None).await;
    let minutely = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["name"] == "minutely")
        .count();
    assert_eq!(minutely, 1, "{jobs}");
    let (_, now) = send(
        reqwest::Method::GET,
        format!("http://{address}/schedules/{schedule_id}"),
        None,
    )
    .await;
    assert_eq!(now["last_job_id"], job_id.as_str());
    assert!(
        now["next_run_at"].as_str().unwrap() > fired["data"]["scheduled_for"].as_str().unwrap(),
        "{now}"
    );
}
