//! Every golden case's PostGIS SQL runs on a real PostgreSQL + PostGIS holding the shared
//! datasets, and its result equals the DuckDB SQL's result on the embedded engine: the same
//! rows with the same attributes, and geometries equal within a stated tolerance. A step DuckDB
//! has no function for runs natively there, as in the embedded engine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::compare::{differences, rows};
use common::golden::{
    cases, duckdb_with_sources, failed_as_native_only, has_native_only, last_table, statements,
};

use geomill_backends::postgis::PostgisEngine;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::spec::Vars;

/// Cases whose geometries may differ by more, and why, with the distance (in the layer's units)
/// both results stay within of the input: areas may then differ by up to twice that distance
/// times the perimeter, centroids by that distance.
const LOOSER: [(&str, f64, &str); 1] = [(
    "simplify",
    0.1,
    "GEOS versions differ in how they simplify (DuckDB's spatial links its own GEOS, PostGIS \
     Debian's 3.11); each result stays within the 0.1 degree tolerance of the input",
)];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_golden_postgis_script_runs_and_matches_duckdb() {
    let dsn = common::postgis::fresh_database("golden").await;
    let postgis = PostgisEngine::new(&dsn).unwrap();
    let duck = duckdb_with_sources();
    for (table, srid) in [("countries", 4326), ("cities", 4326), ("boroughs", 2263)] {
        let copied = duck
            .copy_to_postgis(
                &dsn,
                &format!("SELECT * FROM {table}"),
                ("public", table),
                Some(srid),
            )
            .unwrap();
        assert!(copied > 0, "{table}");
    }
    let output_dir = tempfile::tempdir().unwrap();
    let output = output_dir.path().display().to_string();
    let cases = cases("postgis.sql");
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let pg_sql = std::fs::read_to_string(case.join("postgis.sql"))
            .unwrap()
            .replace("__OUTPUT_DIR__", &output);
        let duck_sql = std::fs::read_to_string(case.join("duckdb.sql"))
            .unwrap()
            .replace("__OUTPUT_DIR__", &output);
        let Some(result) = last_table(&pg_sql) else {
            continue;
        };
        postgis
            .execute("CREATE SCHEMA IF NOT EXISTS golden")
            .await
            .unwrap();
        let keep = [(result.clone(), name.clone())];
        if has_native_only(&pg_sql) {
            let ran = postgis
                .run_script("golden", &statements(&pg_sql), &keep, &|| false)
                .await
                .map_err(|e| format!("{e:?}"));
            if let Err(problem) = failed_as_native_only(ran) {
                failures.push(format!("{name}: PostGIS: {problem}"));
            }
            continue;
        }
        if let Err(error) = postgis
            .run_script("golden", &statements(&pg_sql), &keep, &|| false)
            .await
        {
            failures.push(format!("{name}: PostGIS: {error:?}"));
            continue;
        }
        if has_native_only(&duck_sql) {
            let document: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(case.join("pipeline.json")).unwrap())
                    .unwrap();
            let vars =
                Vars::from_pairs(["date=2026-01-01", "output_dir=/nonexistent", "mode=quick"])
                    .unwrap();
            let file = output_dir.path().join(&name);
            // The step PostGIS's script ends with: a pipeline with several ends may order
            // them differently in each dialect.
            common::golden_runs::run(
                &duck,
                &document,
                (EngineMode::Embedded, &vars),
                &file,
                "embedded",
                Some(&result),
            );
            duck.execute_batch("CREATE OR REPLACE TABLE duck_result AS SELECT * FROM embedded_0")
                .unwrap();
        } else {
            duck.execute_batch(&duck_sql)
                .unwrap_or_else(|e| panic!("{name} on DuckDB: {e}"));
            duck.execute_batch(&format!(
                "CREATE OR REPLACE TABLE duck_result AS SELECT * FROM \"{result}\""
            ))
            .unwrap();
        }
        duck.copy_from_postgis(&dsn, ("golden", &name), "pg_result")
            .unwrap_or_else(|e| panic!("{name}: reading the PostGIS result: {e}"));
        let distance = LOOSER
            .iter()
            .find(|(case, ..)| *case == name)
            .map(|(_, distance, _)| *distance);
        let found = differences(
            &rows(&duck, "duck_result"),
            &rows(&duck, "pg_result"),
            distance,
        );
        if !found.is_empty() {
            failures.push(format!("{name}:\n  {}", found.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
