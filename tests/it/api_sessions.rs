//! Sessions against the real server: open, copy stored layers in, query them read-only, keep
//! sessions apart, end them by DELETE or by idle time-out.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use common::http::HttpApi;
use reqwest::StatusCode;
use serde_json::json;

async fn with_world() -> (HttpApi, String) {
    let api = HttpApi::start(&[]);
    let id = api.upload_world().await;
    (api, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_hold_copied_layers_and_answer_read_only_queries() {
    let (api, dataset) = with_world().await;
    let (status, session) = api.post("/sessions", &json!({"name": "scratch"})).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    assert_eq!(session["kind"], "memory");
    assert_eq!(session["idle_timeout_s"], 900);
    let id = session["id"].as_str().unwrap().to_owned();

    for (body, what) in [
        (json!({"kind": "postgres"}), "kind"),
        (json!({"idle_timeout_s": 0}), "idle_timeout_s"),
        (json!({"colour": "red"}), "colour"),
    ] {
        let (status, error) = api.post("/sessions", &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{what}: {error}");
        assert!(
            error["error"]["message"].as_str().unwrap().contains(what),
            "{error}"
        );
    }

    let (status, table) = api
        .post(
            &format!("/sessions/{id}/layers"),
            &json!({"dataset_id": dataset, "layer": "countries"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{table}");
    assert_eq!(table["rows"], 177);
    // A table name with a NUL character is refused.
    let (status, error) = api
        .post(
            &format!("/sessions/{id}/layers"),
            &json!({"dataset_id": dataset, "name": "a\u{0}b"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    let (status, _) = api
        .post(
            &format!("/sessions/{id}/layers"),
            &json!({"dataset_id": dataset, "layer": "cities", "name": "towns"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, tables) = api.get(&format!("/sessions/{id}/layers")).await;
    let names: Vec<&str> = tables
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["countries", "towns"]);

    // The session's answer equals the SQL endpoint's over the stored layer.
    let per_continent =
        "SELECT continent, count(*) AS n FROM {} GROUP BY continent ORDER BY continent";
    let (status, in_session) = api
        .post(
            &format!("/sessions/{id}/query"),
            &json!({"query": per_continent.replace("{}", "countries")}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{in_session}");
    let stored = format!("\"{dataset}/countries\"");
    let (_, direct) = api
        .post(
            "/api/portal/sql/execute",
            &json!({"query": per_continent.replace("{}", &stored)}),
        )
        .await;
    assert_eq!(in_session["rows"], direct["rows"]);
    assert!(in_session["row_count"].as_u64().unwrap() >= 6);

    // Only read-only queries over the session's own tables.
    for (query, expected) in [
        ("DROP TABLE countries", StatusCode::FORBIDDEN),
        ("SELECT * FROM meta.datasets", StatusCode::FORBIDDEN),
        (
            "SELECT * FROM read_csv('/etc/passwd')",
            StatusCode::FORBIDDEN,
        ),
        ("SELECT 1; DELETE FROM countries", StatusCode::FORBIDDEN),
        ("SELECT * FROM datasets", StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let (status, body) = api
            .post(&format!("/sessions/{id}/query"), &json!({"query": query}))
            .await;
        assert_eq!(status, expected, "{query}: {body}");
    }
    let (_, still) = api
        .post(
            &format!("/sessions/{id}/query"),
            &json!({"query": "SELECT count(*) AS n FROM countries"}),
        )
        .await;
    assert_eq!(still["rows"][0]["n"], 177);

    // Sessions are apart: another one does not see these tables.
    let (_, other) = api.post("/sessions", &json!({})).await;
    let other_id = other["id"].as_str().unwrap();
    let (status, _) = api
        .post(
            &format!("/sessions/{other_id}/query"),
            &json!({"query": "SELECT * FROM countries"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (_, list) = api.get("/sessions").await;
    assert_eq!(list["total"], 2);

    let (status, deleted) = api.delete(&format!("/sessions/{id}")).await;
    assert_eq!((status, deleted), (StatusCode::OK, json!({"deleted": id})));
    for (status, _) in [
        api.get(&format!("/sessions/{id}")).await,
        api.delete(&format!("/sessions/{id}")).await,
        api.post(
            &format!("/sessions/{id}/query"),
            &json!({"query": "SELECT 1"}),
        )
        .await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_and_used_ones_stay() {
    let (api, _) = with_world().await;
    let (_, idle) = api.post("/sessions", &json!({"idle_timeout_s": 1})).await;
    let (_, busy) = api.post("/sessions", &json!({"idle_timeout_s": 3})).await;
    let (idle, busy) = (idle["id"].as_str().unwrap(), busy["id"].as_str().unwrap());
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let (status, _) = api.get(&format!("/sessions/{busy}")).await;
        assert_eq!(status, StatusCode::OK, "a session in use expired");
    }
    let (status, _) = api.get(&format!("/sessions/{idle}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, list) = api.get("/sessions").await;
    assert_eq!(list["total"], 1, "{list}");
    assert!(
        api.server
            .log_lines()
            .iter()
            .any(|l| l.contains("session expired"))
    );
}
