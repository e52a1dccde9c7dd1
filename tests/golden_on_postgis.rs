//! Every golden case's PostGIS SQL runs on a real PostgreSQL + PostGIS holding the shared
//! datasets, and its result equals the DuckDB SQL's result on the embedded engine: the same
//! rows with the same attributes, and geometries equal within a stated tolerance.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod common;

use std::path::PathBuf;

use common::compare::{differences, rows};

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::postgis::PostgisEngine;

/// Cases whose geometries may differ by more, and why, with the distance (in the layer's units)
/// both results stay within of the input: areas may then differ by up to twice that distance
/// times the perimeter, centroids by that distance.
const LOOSER: [(&str, f64, &str); 1] = [(
    "simplify",
    0.1,
    "GEOS versions differ in how they simplify (DuckDB's spatial links its own GEOS, PostGIS \
     Debian's 3.11); each result stays within the 0.1 degree tolerance of the input",
)];

fn repo() -> PathBuf {
    std::env::current_dir().expect("working directory")
}

fn shared_data(name: &str) -> String {
    repo()
        .join("../shared/data")
        .join(name)
        .display()
        .to_string()
}

/// DuckDB with the golden catalog's sources, as the DuckDB golden test loads them.
fn duckdb_with_sources() -> EmbeddedEngine {
    let engine = EmbeddedEngine::open(&EmbeddedOptions::default()).expect("duckdb");
    let load = format!(
        "CREATE TABLE countries AS SELECT * EXCLUDE (OGC_FID) FROM ST_Read('{}');
         CREATE TABLE cities AS SELECT * EXCLUDE (OGC_FID) FROM ST_Read('{}');
         CREATE TABLE boroughs AS SELECT * EXCLUDE (OGC_FID) FROM ST_Read('/vsizip/{}/nybb.shp');",
        shared_data("naturalearth_lowres/naturalearth_lowres.shp"),
        shared_data("naturalearth_cities/naturalearth_cities.shp"),
        shared_data("nybb_16a.zip"),
    );
    engine.execute_batch(&load).expect("load shared data");
    engine
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo().join("golden/pipelines"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("postgis.sql").exists())
        .collect();
    cases.sort();
    cases
}

/// The table the last `CREATE ... TABLE "<name>"` of a script makes.
fn last_table(sql: &str) -> Option<String> {
    sql.lines()
        .filter_map(|l| {
            l.strip_prefix("CREATE TEMP TABLE \"")
                .or_else(|| l.strip_prefix("CREATE OR REPLACE TEMP TABLE \""))
        })
        .next_back()
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
}

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
    let cases = cases();
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
        if let Err(error) = postgis
            .run_script("golden", &pg_sql, &keep, &|| false)
            .await
        {
            failures.push(format!("{name}: PostGIS: {error:?}"));
            continue;
        }
        duck.execute_batch(&duck_sql)
            .unwrap_or_else(|e| panic!("{name} on DuckDB: {e}"));
        duck.execute_batch(&format!(
            "CREATE OR REPLACE TABLE duck_result AS SELECT * FROM \"{result}\""
        ))
        .unwrap();
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
