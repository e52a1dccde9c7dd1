//! Every golden case's PostGIS SQL runs on a real PostgreSQL + PostGIS holding the shared
//! datasets, and its result equals the DuckDB SQL's result on the embedded engine: the same
//! rows with the same attributes, and geometries equal within a stated tolerance.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod common;

use std::cmp::Ordering;
use std::path::PathBuf;
use std::time::Duration;

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::postgis::PostgisEngine;
use serde_json::{Map, Value};

/// Relative tolerance for numbers (attributes, areas, lengths): the engines link different
/// builds of GEOS and PROJ, so the last digits of computed values may differ.
const RELATIVE: f64 = 1e-6;
/// Absolute tolerance for coordinates of centroids, in the layer's units.
const COORDINATE: f64 = 1e-6;

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

/// A result row as compared: its attributes, and measures of its geometry computed by the same
/// engine (DuckDB) for both results.
#[derive(Debug, Clone)]
struct ComparedRow {
    attributes: Map<String, Value>,
    shape: Vec<Value>,
}

/// The geometry measures each row is compared on.
const SHAPE: [&str; 7] = [
    "__kind",
    "__empty",
    "__area",
    "__length",
    "__perimeter",
    "__cx",
    "__cy",
];

fn rows(engine: &EmbeddedEngine, table: &str) -> Vec<ComparedRow> {
    let sql = format!(
        "SELECT * EXCLUDE (geom), ST_GeometryType(geom) AS __kind, ST_IsEmpty(geom) AS __empty, \
         ST_Area(geom) AS __area, ST_Length(geom) AS __length, ST_Perimeter(geom) AS __perimeter, \
         ST_X(ST_Centroid(geom)) AS __cx, ST_Y(ST_Centroid(geom)) AS __cy FROM \"{table}\""
    );
    let result = engine
        .query_rows(&[], &sql, 1_000_000, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{table}: {e}"));
    let mut rows: Vec<ComparedRow> = result
        .rows
        .iter()
        .map(|text| {
            let mut attributes: Map<String, Value> = serde_json::from_str(text).unwrap();
            let shape = SHAPE
                .iter()
                .map(|k| attributes.remove(*k).unwrap_or(Value::Null))
                .collect();
            ComparedRow { attributes, shape }
        })
        .collect();
    rows.sort_by(order);
    rows
}

/// A value as a sort key: numbers rounded so that tolerated differences sort alike.
fn key(value: &Value) -> String {
    match value {
        Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| format!("{f:.4e}")),
        other => other.to_string(),
    }
}

fn order(a: &ComparedRow, b: &ComparedRow) -> Ordering {
    let keys = |r: &ComparedRow| {
        r.attributes
            .values()
            .chain(r.shape.iter())
            .map(key)
            .collect::<Vec<_>>()
    };
    keys(a).cmp(&keys(b))
}

/// Equal values; numbers within `absolute` or `relative` of each other.
fn close(a: &Value, b: &Value, absolute: f64, relative: f64) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= absolute.max(relative * x.abs().max(y.abs())),
        _ => a == b,
    }
}

/// Differences between the two results, empty when they agree. Geometries are compared on
/// their measures; with `distance`, as two approximations of one shape within that distance.
fn differences(duck: &[ComparedRow], pg: &[ComparedRow], distance: Option<f64>) -> Vec<String> {
    if duck.len() != pg.len() {
        return vec![format!(
            "{} rows on DuckDB, {} on PostGIS",
            duck.len(),
            pg.len()
        )];
    }
    let mut found = Vec::new();
    for (index, (d, p)) in duck.iter().zip(pg).enumerate() {
        let names_d: Vec<&String> = d.attributes.keys().collect();
        let names_p: Vec<&String> = p.attributes.keys().collect();
        if names_d != names_p {
            found.push(format!("columns differ: {names_d:?} vs {names_p:?}"));
            break;
        }
        for (name, value) in &d.attributes {
            if !close(value, &p.attributes[name], 1e-9, RELATIVE) {
                found.push(format!(
                    "row {index} {name}: {value} vs {}",
                    p.attributes[name]
                ));
            }
        }
        for (measure, (x, y)) in SHAPE.iter().zip(d.shape.iter().zip(&p.shape)) {
            let perimeter = d.shape[4].as_f64().unwrap_or(0.0);
            let agree = match (distance, *measure) {
                (Some(distance), "__area") => close(x, y, 2.0 * distance * perimeter, RELATIVE),
                (Some(distance), "__cx" | "__cy") => close(x, y, distance, RELATIVE),
                (Some(_), "__length" | "__perimeter") => close(x, y, 1e-9, 0.05),
                (None, "__cx" | "__cy") => close(x, y, COORDINATE, RELATIVE),
                _ => close(x, y, 1e-9, RELATIVE),
            };
            if !agree {
                found.push(format!("row {index} {measure}: {x} vs {y}"));
            }
        }
        if found.len() > 5 {
            break;
        }
    }
    found
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
