//! Pipelines executed on the embedded engine, checked against GDAL's own SQL engine
//! (SpatiaLite) on the same data.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;
use common::uploads::upload_file;

use common::post_json as post;

use axum::http::StatusCode;
use common::{call, gdal, ogrinfo_summary, test_state};
use geomill::state::AppState;
use serde_json::{Value, json};

/// Uploads the world GeoPackage at `path`; answers the dataset's id.
async fn upload_world(state: &AppState, path: &str) -> String {
    upload_file(state, path).await
}

/// `(key, n)` rows of a SpatiaLite query run by ogrinfo.
fn spatialite_counts(path: &str, sql: &str) -> Vec<(String, i64)> {
    let text = gdal(
        "ogrinfo",
        &["-ro", "-q", "-dialect", "SQLite", "-sql", sql, path],
    );
    // Lines such as `  key (String) = FRA` and `  n (Integer64) = 4`.
    let values = |field: &str| -> Vec<String> {
        let prefix = format!("{field} (");
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(prefix.as_str()))
            .filter_map(|rest| rest.split_once(") = ").map(|(_, v)| v.to_owned()))
            .collect()
    };
    let counts = values("n").into_iter().map(|n| n.parse::<i64>().unwrap());
    values("key").into_iter().zip(counts).collect()
}

/// The world GeoPackage written into `dir` and uploaded, and a request running the issue's
/// golden pipeline on it; returns the GeoPackage's path and the request.
async fn issue_pipeline_request(state: &AppState, dir: &std::path::Path) -> (String, Value) {
    let gpkg = common::world_gpkg(dir);
    let dataset = upload_world(state, &gpkg).await;
    let path = "golden/pipelines/issue_pipeline/pipeline.json";
    let pipeline: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let request = json!({"pipeline": pipeline, "dataset_id": dataset, "vars": {"date": "2026-01-01", "output_dir": "exports"}});
    (gpkg, request)
}

#[tokio::test]
async fn the_issue_pipeline_counts_what_spatialite_counts() {
    let (dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let (gpkg, request) = issue_pipeline_request(&state, work.path()).await;
    let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["status"], "COMPLETED");
    assert_eq!(run["steps_executed"], 5);

    // Independent: SpatiaLite through GDAL, on the file as uploaded.
    let big = spatialite_counts(
        &gpkg,
        "SELECT 'all' AS key, count(*) AS n FROM countries WHERE pop_est > 50000000",
    );
    assert_eq!(run["result_features"], big[0].1);
    let expected = spatialite_counts(
        &gpkg,
        "SELECT c.iso_a3 AS key, count(p.fid) AS n FROM countries c LEFT JOIN cities p ON ST_Within(p.geom, c.geom) \
         WHERE c.pop_est > 50000000 GROUP BY c.iso_a3 ORDER BY c.iso_a3",
    );
    assert_eq!(expected.len() as i64, big[0].1);
    let result = run["result_path"].as_str().unwrap();
    assert!(
        result.starts_with(&dir.path().display().to_string()) && result.ends_with("result.gpkg"),
        "{result}"
    );
    let actual = spatialite_counts(
        result,
        "SELECT iso_a3 AS key, \"count\" AS n FROM result ORDER BY iso_a3",
    );
    assert_eq!(actual, expected);

    // The export step wrote its file under the data directory, with the run variables applied.
    let outputs = run["outputs"].as_array().unwrap();
    let exported = outputs[0].as_str().unwrap();
    assert!(
        exported.ends_with("exports/counted_2026-01-01.gpkg"),
        "{exported}"
    );
    let (count, epsg) = ogrinfo_summary(exported, "counted_2026-01-01");
    assert_eq!(count, big[0].1);
    assert_eq!(epsg.as_deref(), Some("EPSG:4326"));
}

#[tokio::test]
async fn runs_that_cannot_start_or_fail_say_why() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let dataset = upload_world(&state, &common::world_gpkg(work.path())).await;
    let run = |pipeline: Value, vars: Value| json!({"pipeline": pipeline, "dataset_id": dataset, "vars": vars});
    let cases = [
        (
            run(
                json!({"steps": [{"id": "a", "capability": "centroid", "input": "oceans"}]}),
                json!({}),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "oceans name no stored layer",
        ),
        (
            run(
                json!({"steps": [{"id": "a", "capability": "export", "input": "cities", "params": {"destination": "/etc/cron.d/x.gpkg"}}]}),
                json!({}),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "must be a relative path",
        ),
        (
            run(
                json!({"steps": [{"id": "a", "capability": "export", "input": "cities", "params": {"destination": "out/{date}.gpkg"}}]}),
                json!({}),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "no value for variable(s) date",
        ),
        (
            run(
                json!({"steps": [{"id": "a", "capability": "reproject", "input": "cities", "params": {"to": "EPSG:999999"}}]}),
                json!({}),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "the pipeline failed",
        ),
        (
            json!({"pipeline": {"steps": [{"id": "a", "capability": "centroid"}]}, "dataset_id": "00000000-0000-4000-8000-000000000000"}),
            StatusCode::NOT_FOUND,
            "no dataset",
        ),
        (
            json!({"pipeline": {"steps": [{"id": "a", "capability": "centroid"}]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "`input` is the dataset named by dataset_id",
        ),
    ];
    for (request, expected, words) in cases {
        let (status, body) = call(&state, post("/pipelines/execute", &request)).await;
        assert_eq!(status, expected, "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(words),
            "{body}"
        );
    }
    // A failed run reports FAILED and leaves no result behind.
    let failing = run(
        json!({"steps": [{"id": "a", "capability": "reproject", "input": "cities", "params": {"to": "EPSG:999999"}}]}),
        json!({}),
    );
    let (_, body) = call(&state, post("/api/pipelines/execute", &failing)).await;
    assert_eq!(body["error"]["detail"]["status"], "FAILED");
    let job = body["error"]["detail"]["job_id"].as_str().unwrap();
    assert!(!_dir.path().join("results").join(job).exists());
}

#[tokio::test]
async fn step_by_step_runs_report_every_statement() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let (gpkg, request) = issue_pipeline_request(&state, work.path()).await;
    let (status, run) = call(&state, post("/pipelines/execute-steps", &request)).await;
    assert_eq!(status, StatusCode::OK, "{run}");
    let statements = run["statements"].as_array().unwrap();
    let steps: Vec<&str> = statements
        .iter()
        .map(|s| s["steps"][0].as_str().unwrap())
        .collect();
    // `halo` is a buffer: its input made valid first, then buffered (two statements).
    assert_eq!(
        steps,
        ["big", "halo", "halo", "cities_in", "counted", "save"]
    );
    let big = spatialite_counts(
        &gpkg,
        "SELECT 'all' AS key, count(*) AS n FROM countries WHERE pop_est > 50000000",
    )[0]
    .1;
    assert_eq!(statements[0]["rows"], big);
    assert_eq!(statements[1]["rows"], big, "making valid keeps every row");
    assert_eq!(statements[2]["rows"], big, "a buffer keeps every row");
    assert_eq!(statements[4]["rows"], run["result_features"]);
    assert!(statements[5]["rows"].is_null(), "an export makes no table");
    // The optimised run answers the same result.
    let (_, optimised) = call(&state, post("/api/pipelines/execute", &request)).await;
    assert_eq!(optimised["result_features"], run["result_features"]);
    assert!(optimised.get("statements").is_none());
}

#[tokio::test]
async fn examples_are_valid_pipelines() {
    let (_dir, state) = test_state();
    for path in ["/api/pipelines/examples", "/pipelines/examples"] {
        let (status, examples) = call(&state, common::get(path)).await;
        assert_eq!(status, StatusCode::OK);
        let examples = examples.as_array().unwrap();
        assert!(examples.len() >= 4);
        for example in examples {
            let catalog: Value =
                serde_json::from_str(&std::fs::read_to_string("golden/catalog.json").unwrap())
                    .unwrap();
            let request = json!({"pipeline": example["pipeline"], "catalog": catalog});
            let (status, answer) = call(&state, post("/api/pipelines/validate", &request)).await;
            assert_eq!(
                (status, answer["valid"].clone()),
                (StatusCode::OK, json!(true)),
                "{}: {answer}",
                example["name"]
            );
        }
    }
}

#[tokio::test]
async fn a_server_started_with_the_native_engine_runs_pipelines_natively_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path());
    config.engine = geomill_planner::optimizer::EngineMode::Native;
    let state = AppState::open(config).unwrap();
    let (status, health) = call(&state, common::get("/health")).await;
    assert_eq!(health["engine"], "native", "{status} {health}");
    let gpkg = common::world_gpkg(dir.path());
    let dataset = upload_world(&state, &gpkg).await;
    let request = json!({"dataset_id": dataset, "pipeline": {"name": "halo", "steps": [
        {"id": "halo", "capability": "buffer", "input": "cities",
         "params": {"distance": 10000, "unit": "meters"}}]}});
    let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::OK, "{run}");
    let stages = run["native"].as_array().cloned().unwrap_or_default();
    assert!(
        !stages.is_empty() && stages.iter().all(|s| s["ran"] == "native"),
        "{run}"
    );
}
