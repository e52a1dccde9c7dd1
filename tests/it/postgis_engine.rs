//! Runs on the PostGIS engine through the real server: pipelines and jobs with
//! `engine: "postgis"` give the embedded engine's results (also several at once), and
//! PostgreSQL going away under a running server is a 503 with a clear message (and `/health`
//! saying so) until it is back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::{Duration, Instant};

use common::http::HttpApi;
use common::postgis::{OwnCluster, fresh_database};
use common::{Server, ogrinfo_summary};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The counting pipeline: populous countries, a 500 m halo, the cities in it, a count per
/// country, and an export.
fn counting_pipeline() -> Value {
    json!({"name": "counted", "steps": [
        {"id": "big", "capability": "filter", "input": "countries",
         "params": {"where": "pop_est > 50000000"}},
        {"id": "halo", "capability": "buffer", "input": "big",
         "params": {"distance": 500, "unit": "meters"}},
        {"id": "inside", "capability": "spatial_join", "input": "cities",
         "params": {"ref_layer": "halo", "columns": ["iso_a3"]}},
        {"id": "counted", "capability": "spatial_aggregate", "input": "big",
         "params": {"ref_layer": "inside", "predicate": "within", "agg": {"*": "count"}}},
        {"id": "save", "capability": "export", "input": "counted",
         "params": {"destination": "counted.geojson"}}
    ]})
}

/// `name` and `count` of every feature of a result GeoPackage, sorted.
fn counts(path: &str) -> Vec<(String, i64)> {
    let text = common::gdal("ogrinfo", &["-ro", "-al", "-q", path, "result"]);
    let mut rows = Vec::new();
    let mut name = None;
    for line in text.lines().map(str::trim) {
        if let Some(value) = line.strip_prefix("name (String) = ") {
            name = Some(value.to_owned());
        }
        if let Some(value) = line
            .strip_prefix("count (Integer64) = ")
            .or_else(|| line.strip_prefix("count (Integer) = "))
        {
            rows.push((name.take().unwrap_or_default(), value.parse().unwrap()));
        }
    }
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelines_and_jobs_on_postgis_give_the_embedded_results() {
    let dsn = fresh_database("engine").await;
    let api = HttpApi::start(&[("GEOMILL_POSTGIS_DSN", &dsn)]);
    let dataset = api.upload_world().await;
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["components"]["postgis"], "ok");

    let mut results = Vec::new();
    for engine in ["embedded", "postgis"] {
        let (status, run) = api
            .post(
                "/api/pipelines/execute",
                &json!({"pipeline": counting_pipeline(), "dataset_id": dataset, "engine": engine}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{engine}: {run}");
        let path = run["result_path"].as_str().unwrap().to_owned();
        let (features, crs) = ogrinfo_summary(&path, "result");
        assert_eq!(
            features,
            run["result_features"].as_i64().unwrap(),
            "{engine}"
        );
        assert!(crs.is_some(), "{engine}: the result has no CRS");
        let export = run["outputs"][0].as_str().unwrap();
        let (exported, _) = ogrinfo_summary(export, "counted");
        assert_eq!(exported, features, "{engine}: {export}");
        results.push(counts(&path));
    }
    assert!(results[0].len() > 5, "{:?}", results[0]);
    assert!(results[0].iter().any(|(_, count)| *count > 0));
    assert_eq!(results[0], results[1], "embedded vs postgis");

    // A job on PostGIS: recorded with its engine, completed, nothing left in PostGIS.
    let (status, job) = api
        .post(
            "/jobs",
            &json!({"name": "on postgis", "dataset_id": dataset, "engine": "postgis",
                    "pipeline": counting_pipeline()}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    assert_eq!(job["engine"], "postgis");
    let id = job["id"].as_str().unwrap();
    let start = Instant::now();
    let done = loop {
        let (_, job) = api.get(&format!("/jobs/{id}")).await;
        if matches!(job["status"].as_str(), Some("COMPLETED" | "FAILED")) {
            break job;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{job}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(
        done["result"]["features"].as_i64().unwrap(),
        results[1].len() as i64
    );
    let leftover = std::process::Command::new("psql")
        .args([
            &dsn,
            "-Atc",
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'geomill_run_%'",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&leftover.stdout).trim(), "0");

    // A document PostGIS refuses fails the run with the database's reason; a bad engine name
    // is refused before anything runs.
    let (status, failed) = api
        .post(
            "/api/pipelines/execute",
            &json!({"dataset_id": dataset, "engine": "postgis", "pipeline": {"name": "bad", "steps": [
                {"id": "odd", "capability": "filter", "input": "countries",
                 "params": {"where": "name > 5"}}]}}),
        )
        .await;
    assert!(status.is_client_error(), "{status}: {failed}");
    assert!(failed["error"]["message"].is_string(), "{failed}");
    let (status, body) = api
        .post(
            "/api/pipelines/execute",
            &json!({"pipeline": counting_pipeline(), "dataset_id": dataset, "engine": "oracle"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_on_postgis_at_the_same_moment_each_get_their_answer() {
    let dsn = fresh_database("concurrent").await;
    let api = HttpApi::start(&[("GEOMILL_POSTGIS_DSN", &dsn)]);
    let dataset = api.upload_world().await;
    let run = json!({"pipeline": counting_pipeline(), "dataset_id": dataset, "engine": "postgis"});
    let path = "/api/pipelines/execute";
    // Eight runs at once: each copies the layers into a scratch schema of its own, which the
    // others' attachments of PostgreSQL must not hide.
    let post = || api.post(path, &run);
    let (a, b, c, d, e, f, g, h) = tokio::join!(
        post(),
        post(),
        post(),
        post(),
        post(),
        post(),
        post(),
        post()
    );
    let mut answers = Vec::new();
    for (status, body) in [a, b, c, d, e, f, g, h] {
        assert_eq!(status, StatusCode::OK, "{body}");
        answers.push(counts(body["result_path"].as_str().unwrap()));
    }
    assert!(answers[0].len() > 5, "{:?}", answers[0]);
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_going_away_is_a_503_until_it_comes_back() {
    let cluster = OwnCluster::start();
    let api = HttpApi::start(&[("GEOMILL_POSTGIS_DSN", &cluster.dsn())]);
    let dataset = api.upload_world().await;
    let run = json!({"pipeline": counting_pipeline(), "dataset_id": dataset, "engine": "postgis"});
    let (status, body) = api.post("/api/pipelines/execute", &run).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    cluster.stop();
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{health}");
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["components"]["postgis"], "unavailable");
    assert_eq!(health["components"]["database"], "ok");
    let (status, body) = api.post("/api/pipelines/execute", &run).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("PostGIS"), "{message}");
    // What does not need PostgreSQL goes on working.
    let (status, _) = api.get("/datasets").await;
    assert_eq!(status, StatusCode::OK);
    let embedded = json!({"pipeline": counting_pipeline(), "dataset_id": dataset});
    let (status, body) = api.post("/api/pipelines/execute", &embedded).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    cluster.resume();
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::OK, "{health}");
    let (status, body) = api.post("/api/pipelines/execute", &run).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projects_are_schemas_of_their_own_holding_copied_layers() {
    let dsn = fresh_database("projects").await;
    let api = HttpApi::start(&[("GEOMILL_POSTGIS_DSN", &dsn)]);
    let dataset = api.upload_world().await;

    let (status, project) = api
        .post(
            "/projects",
            &json!({"name": "city_planning", "description": "zones"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    assert_eq!(project["schema"], "project_city_planning");
    let id = project["id"].as_str().unwrap().to_owned();
    let (status, again) = api
        .post("/projects", &json!({"name": "city_planning"}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    // Names are checked, never pasted: a hostile one is refused and changes nothing.
    for bad in ["x\"; DROP SCHEMA public CASCADE; --", "Zones", "", "a-b"] {
        let (status, body) = api.post("/projects", &json!({"name": bad})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {body}");
    }
    // A NUL character, which PostgreSQL text cannot hold, is refused.
    let (status, body) = api
        .post(
            "/projects",
            &json!({"name": "nul", "description": "a\u{0}b"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, list) = api.get("/projects").await;
    assert_eq!(list["total"], 1, "{list}");

    let (status, layers) = api.get(&format!("/projects/{id}/layers")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(layers, json!([]));
    let (status, added) = api
        .post(
            &format!("/projects/{id}/layers"),
            &json!({"dataset_id": dataset, "layer": "countries", "name": "zones"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    assert_eq!(added["srid"], 4326);
    let (_, layers) = api.get(&format!("/projects/{id}/layers")).await;
    assert_eq!(layers[0]["name"], "zones", "{layers}");
    assert_eq!(layers[0]["feature_count"], 177, "{layers}");
    let (status, body) = api
        .post(
            &format!("/projects/{id}/layers"),
            &json!({"dataset_id": dataset, "name": "a\u{0}b"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    // PostgreSQL agrees: the schema exists, its table has a GiST index, public is intact.
    let psql = |sql: &str| {
        let out = std::process::Command::new("psql")
            .args([&dsn, "-Atc", sql])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(
        psql("SELECT count(*) FROM project_city_planning.zones"),
        "177"
    );
    assert!(
        psql("SELECT indexdef FROM pg_indexes WHERE schemaname = 'project_city_planning'")
            .contains("gist")
    );
    assert_eq!(
        psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'public'"),
        "1"
    );

    let (status, _) = api.get("/projects/nothing/layers").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = api
        .post(
            &format!("/projects/{id}/layers"),
            &json!({"dataset_id": "00000000-0000-4000-8000-000000000000"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projects_without_postgis_say_what_is_missing() {
    let server = Server::start(&[]);
    let client = reqwest::Client::new();
    let response = client.get(server.url("/projects")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("GEOMILL_POSTGIS_DSN"),
        "{body}"
    );
    let (status, health) = {
        let response = client.get(server.url("/health")).send().await.unwrap();
        (response.status(), response.json::<Value>().await.unwrap())
    };
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["components"]["postgis"], "unavailable");
}
