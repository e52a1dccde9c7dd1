//! Scenarios: nodes checked at creation; a sequential run stops at the first node that fails
//! (the rest skipped), an independent run reports every node; one node runs alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::live::{assert_unprocessable, send, serve, upload_world};

async fn post(url: String, body: Option<Value>) -> (u16, Value) {
    send(reqwest::Method::POST, url, body).await
}
use serde_json::{Value, json};

fn job(dataset: &str, name: &str, filter: &str) -> Value {
    json!({"name": name, "dataset_id": dataset,
        "rules": [{"name": name, "capability": "filter", "params": {"input": "countries", "where": filter}}]})
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node_id"].as_str().unwrap().to_owned(),
                n["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_stop_or_go_on_by_mode_and_nodes_run_alone() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let dataset = upload_world(address, dir.path()).await;
    let dataset = dataset["id"].as_str().unwrap();
    let url = |path: &str| format!("http://{address}{path}");

    // A node whose query fails when it runs (names are not numbers).
    let nodes = json!([
        {"id": "big", "job": job(dataset, "big", "pop_est > 100000000")},
        {"id": "broken", "job": job(dataset, "broken", "CAST(name AS INTEGER) > 0")},
        {"id": "small", "job": job(dataset, "small", "pop_est < 1000000")},
    ]);
    let (status, scenario) = post(
        url("/scenarios"),
        Some(json!({"name": "three", "nodes": nodes})),
    )
    .await;
    assert_eq!(status, 201, "{scenario}");
    assert_eq!(scenario["mode"], "sequential");
    let id = scenario["id"].as_str().unwrap();

    let (status, report) = post(url(&format!("/scenarios/{id}/run")), None).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(
        statuses(&report),
        pairs(&[
            ("big", "COMPLETED"),
            ("broken", "FAILED"),
            ("small", "SKIPPED")
        ]),
        "{report}"
    );
    assert_eq!(report["status"], "failed");
    assert!(
        report["nodes"][1]["error"]
            .as_str()
            .unwrap()
            .contains("INTEGER"),
        "{report}"
    );

    let (_, report) = post(url(&format!("/scenarios/{id}/run?mode=independent")), None).await;
    assert_eq!(
        statuses(&report),
        pairs(&[
            ("big", "COMPLETED"),
            ("broken", "FAILED"),
            ("small", "COMPLETED")
        ]),
        "{report}"
    );
    assert_eq!(report["mode"], "independent");

    let (status, report) = post(url(&format!("/scenarios/{id}/run-node?node=small")), None).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(statuses(&report), pairs(&[("small", "COMPLETED")]));
    assert_eq!(report["status"], "completed");
    let job_id = report["nodes"][0]["job_id"].as_str().unwrap();
    let job: Value = reqwest::get(url(&format!("/jobs/{job_id}")))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(job["status"], "COMPLETED");

    let (status, _) = post(url(&format!("/scenarios/{id}/run-node?node=nope")), None).await;
    assert_eq!(status, 404);
    let (status, _) = post(url(&format!("/scenarios/{id}/run?mode=sideways")), None).await;
    assert_eq!(status, 400);
    let (status, _) = post(
        url("/scenarios/00000000-0000-4000-8000-000000000000/run"),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_are_checked_when_written() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let dataset = upload_world(address, dir.path()).await;
    let dataset = dataset["id"].as_str().unwrap();
    let url = format!("http://{address}/scenarios");
    let good = job(dataset, "big", "pop_est > 100000000");
    for (body, expected) in [
        (json!({"name": "none", "nodes": []}), "1 to 100"),
        (
            json!({"name": "twice", "nodes": [{"id": "a", "job": good}, {"id": "a", "job": good}]}),
            "unique",
        ),
        (
            json!({"name": "bad", "nodes": [{"id": "a", "job": {"dataset_id": dataset, "rules": [{"name": "b", "capability": "bufer", "params": {}}]}}]}),
            "node a",
        ),
        (
            json!({"name": "mode", "mode": "parallel", "nodes": [{"id": "a", "job": good}]}),
            "mode",
        ),
    ] {
        let (status, answer) = post(url.clone(), Some(body.clone())).await;
        assert_unprocessable(status, &answer, expected, &body);
    }
    let (status, _) = post(
        url.clone(),
        Some(json!({"name": "one", "mode": "independent", "nodes": [{"id": "a", "job": good}]})),
    )
    .await;
    assert_eq!(status, 201);
    let list: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    assert_eq!(list["total"], 1, "refused scenarios are not stored: {list}");
    assert_eq!(list["scenarios"][0]["mode"], "independent");
}
