//! Hybrid mode (`GEOMILL_ENGINE=hybrid`) through the real server: the data lives in PostGIS,
//! the plan gives joins, aggregates, nearest and per-feature geometry to the native backend and
//! the relational steps to PostGIS (the plan text says which and why, `sql-preview` marks the
//! native statements), and each run's result equals the embedded engine's on the same data.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::compare::{differences, rows};
use common::http::HttpApi;
use common::postgis::fresh_database;
use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Pipelines mixing relational steps (PostGIS) and steps with native kernels.
fn pipelines() -> Vec<(&'static str, Value)> {
    vec![
        (
            "aggregate",
            json!({"name": "cities_per_country", "steps": [
                {"id": "big", "capability": "filter", "input": "countries",
                 "params": {"where": "pop_est > 1000000"}},
                {"id": "counted", "capability": "spatial_aggregate",
                 "params": {"input": "big", "ref_layer": "cities", "predicate": "within",
                            "agg": {"*": "count"}}},
                {"id": "some", "capability": "filter", "params": {"where": "count > 0"}}]}),
        ),
        (
            "join",
            json!({"name": "cities_with_country", "steps": [
                {"id": "joined", "capability": "spatial_join", "input": "cities",
                 "params": {"ref_layer": "countries", "predicate": "intersects",
                            "columns": ["name", "continent"], "how": "inner"}},
                {"id": "european", "capability": "filter",
                 "params": {"where": "continent = 'Europe'"}}]}),
        ),
        (
            "buffer_dissolve",
            json!({"name": "halos", "steps": [
                {"id": "halo", "capability": "buffer", "input": "cities",
                 "params": {"distance": 50000, "unit": "meters"}},
                {"id": "merged", "capability": "union", "params": {}}]}),
        ),
        (
            // The last stage is native and exported: written from the embedded database.
            "buffer_export",
            json!({"name": "halos_saved", "steps": [
                {"id": "halo", "capability": "buffer", "input": "cities",
                 "params": {"distance": 20000, "unit": "meters"}},
                {"id": "save", "capability": "export",
                 "params": {"destination": "{output_dir}/halos.gpkg"}}]}),
        ),
    ]
}

async fn execute(api: &HttpApi, dataset: &str, pipeline: &Value, engine: &str) -> Value {
    let (status, run) = api
        .post(
            "/api/pipelines/execute",
            &json!({"dataset_id": dataset, "pipeline": pipeline, "engine": engine,
                    "vars": {"output_dir": format!("exports/{engine}")}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{engine}: {run}");
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_runs_split_the_plan_and_equal_embedded() {
    let dsn = fresh_database("hybrid").await;
    let api = HttpApi::start(&[("GEOMILL_ENGINE", "hybrid"), ("GEOMILL_POSTGIS_DSN", &dsn)]);
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["engine"], "hybrid", "{health}");
    let dataset = api.upload_world().await;
    let compare = EmbeddedEngine::open(&EmbeddedOptions::default()).unwrap();
    for (name, pipeline) in pipelines() {
        // The plan says where each step runs and why; the preview marks the native SQL.
        let (status, preview) = api
            .post(
                "/api/pipelines/preview",
                &json!({"pipeline": pipeline, "engine": "hybrid"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{preview}");
        let optimized = preview["optimized"].as_str().unwrap_or_default().to_owned();
        assert!(
            optimized.contains("engine=native why="),
            "{name}: {optimized}"
        );
        assert!(
            optimized.contains("engine=postgis why="),
            "{name}: {optimized}"
        );

        // The default engine is hybrid: no engine in the request.
        let (status, hybrid) = api
            .post(
                "/api/pipelines/execute",
                &json!({"dataset_id": dataset, "pipeline": pipeline,
                        "vars": {"output_dir": "exports/hybrid"}}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{name}: {hybrid}");
        let native = hybrid["native"].as_array().cloned().unwrap_or_default();
        assert!(!native.is_empty(), "{name}: {hybrid}");
        assert!(
            native.iter().all(|stage| stage["ran"] == "native"),
            "{name}: {hybrid}"
        );
        // Each stage says where its time went: moving rows out of PostGIS, kernels, back.
        for stage in &native {
            let seconds = ["read", "kernels", "store"].map(|k| stage["seconds"][k].as_f64());
            assert!(
                seconds.iter().all(|s| s.is_some_and(|s| s >= 0.0)),
                "{name}: {stage}"
            );
        }
        // Embedded runs on DuckDB but for the points-per-polygon aggregate (and a whole-layer
        // dissolve, not in these pipelines).
        let embedded = execute(&api, &dataset, &pipeline, "embedded").await;
        let embedded_native = embedded["native"].as_array().cloned().unwrap_or_default();
        assert!(
            embedded_native
                .iter()
                .all(|stage| name == "aggregate" && stage["relation"] == "counted"),
            "{embedded}"
        );
        assert_eq!(
            hybrid["result_features"], embedded["result_features"],
            "{name}"
        );
        for (side, run) in [("hybrid", &hybrid), ("embedded", &embedded)] {
            compare
                .execute_batch(&format!(
                    "CREATE OR REPLACE TABLE \"{name}_{side}\" AS SELECT * EXCLUDE (fid) FROM ST_Read('{}')",
                    run["result_path"].as_str().unwrap()
                ))
                .unwrap();
        }
        let found = differences(
            &rows(&compare, &format!("{name}_embedded")),
            &rows(&compare, &format!("{name}_hybrid")),
            None,
        );
        assert!(found.is_empty(), "{name}: {}", found.join("; "));
        // Exported files hold the result too, on both engines.
        for run in [&hybrid, &embedded] {
            let exports = usize::from(name == "buffer_export");
            assert_eq!(
                run["outputs"].as_array().map(Vec::len),
                Some(exports),
                "{run}"
            );
            for output in run["outputs"].as_array().into_iter().flatten() {
                let path = output.as_str().unwrap();
                let features = compare
                    .query_i64(&format!("SELECT count(*) FROM ST_Read('{path}')"))
                    .unwrap();
                assert_eq!(json!(features), run["result_features"], "{name}: {path}");
            }
        }
    }
}
