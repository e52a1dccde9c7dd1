//! Every golden case's DuckDB SQL runs on a real DuckDB with the shared datasets loaded, so a
//! preview is never SQL that fails; results are checked against direct queries where simple.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::golden::{
    cases, duckdb_with_sources, failed_as_native_only, has_native_only, last_table, repo,
};
use geomill_backends::duckdb::EmbeddedEngine;

#[test]
fn every_golden_duckdb_script_runs() {
    let engine = duckdb_with_sources();
    let output_dir = tempfile::tempdir().unwrap();
    let cases = cases("duckdb.sql");
    assert!(cases.len() >= 25);
    let mut failures = Vec::new();
    for case in &cases {
        let sql = std::fs::read_to_string(case.join("duckdb.sql"))
            .unwrap()
            .replace("__OUTPUT_DIR__", &output_dir.path().display().to_string());
        if has_native_only(&sql) {
            let ran = engine.execute_batch(&sql).map_err(|e| e.to_string());
            if let Err(problem) = failed_as_native_only(ran) {
                failures.push(format!("{}: {problem}", case.display()));
            }
            continue;
        }
        if let Err(error) = engine.execute_batch(&sql) {
            failures.push(format!("{}: {error}", case.display()));
            continue;
        }
        if let Some(table) = last_table(&sql) {
            let count = engine.query_i64(&format!("SELECT count(*) FROM \"{table}\""));
            assert!(count.is_ok(), "{}: {count:?}", case.display());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for file in [
        "europe_2026-01-01.gpkg",
        "counted_2026-01-01.gpkg",
        "south.csv",
        "south_centroids.fgb",
    ] {
        assert!(
            output_dir.path().join(file).exists(),
            "{file} was not written"
        );
    }
}

/// Runs a golden case; returns `table`, the result table it creates.
fn run<'a>(engine: &EmbeddedEngine, case: &str, table: &'a str) -> &'a str {
    let path = repo()
        .join("golden/pipelines")
        .join(case)
        .join("duckdb.sql");
    let sql = std::fs::read_to_string(path).unwrap();
    engine
        .execute_batch(&sql)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    table
}

fn count(engine: &EmbeddedEngine, sql: &str) -> i64 {
    engine.query_i64(sql).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn golden_results_agree_with_direct_queries() {
    let engine = duckdb_with_sources();
    let table = run(&engine, "filter_rule", "big");
    assert_eq!(
        count(&engine, &format!("SELECT count(*) FROM \"{table}\"")),
        count(
            &engine,
            "SELECT count(*) FROM countries WHERE pop_est > 100000000 AND continent <> 'Antarctica'"
        )
    );
    // Every city lies in or near a country; `within` counts sum to the cities inside one.
    let table = run(&engine, "spatial_aggregate_count", "counted");
    assert_eq!(
        count(&engine, &format!("SELECT count(*) FROM \"{table}\"")),
        177
    );
    assert_eq!(
        count(&engine, &format!("SELECT sum(\"count\") FROM \"{table}\"")),
        count(
            &engine,
            "SELECT count(*) FROM cities c JOIN countries k ON ST_Within(c.geom, k.geom)"
        )
    );
    let table = run(&engine, "dissolve_by_continent", "continents");
    assert_eq!(
        count(&engine, &format!("SELECT count(*) FROM \"{table}\"")),
        count(&engine, "SELECT count(DISTINCT continent) FROM countries")
    );
    // A 500 m geodesic buffer of a point: area close to π·500² m² (within 1 %).
    let table = run(&engine, "buffer_meters_on_lonlat", "halo");
    let area = count(
        &engine,
        &format!(
            "SELECT CAST(avg(ST_Area_Spheroid(ST_FlipCoordinates(geom))) AS BIGINT) FROM \"{table}\""
        ),
    );
    let expected = (std::f64::consts::PI * 500.0 * 500.0) as i64;
    assert!(
        (area - expected).abs() < expected / 100,
        "area {area} vs {expected}"
    );
    let table = run(&engine, "sort_and_top_n", "top5");
    assert_eq!(
        count(&engine, &format!("SELECT count(*) FROM \"{table}\"")),
        5
    );
    assert_eq!(
        count(&engine, &format!("SELECT min(gdp_md_est) FROM \"{table}\"")),
        count(
            &engine,
            "SELECT min(gdp_md_est) FROM (SELECT gdp_md_est FROM countries ORDER BY gdp_md_est DESC LIMIT 5)"
        )
    );
}

/// Planned without the input's columns (DuckDB selects `*`), a step that replaces the geometry
/// keeps it where the input has it and leaves none of its helper columns behind.
#[test]
fn steps_planned_without_columns_keep_the_geometry_in_place() {
    use geomill_planner::sql::{Dialect, emit};
    use geomill_planner::{compile, optimizer::EngineMode, schema::Catalog, spec::Vars};
    let engine = duckdb_with_sources();
    let position = |table: &str| {
        count(
            &engine,
            &format!(
                "SELECT ordinal_position FROM information_schema.columns WHERE table_name = '{table}' AND column_name = 'geom'"
            ),
        )
    };
    // The geometry first, unlike the shared files.
    engine
        .execute_batch("CREATE TABLE geometry_first AS SELECT geom, name FROM cities")
        .unwrap();
    let source = position("geometry_first");
    assert_eq!(source, 1);
    for (step, capability) in [
        ("pieces", "extract_segments"),
        ("cells", "voronoi_polygons"),
    ] {
        let document = serde_json::json!({"name": step, "steps": [
            {"id": step, "capability": capability, "input": "geometry_first", "params": {}}]});
        let planned = compile(
            &document,
            &Catalog::default(),
            &Vars::default(),
            EngineMode::Embedded,
        )
        .unwrap();
        let script = emit(&planned[0].optimized, Dialect::Duckdb).unwrap();
        engine
            .execute_batch(&script.to_text())
            .unwrap_or_else(|e| panic!("{capability}: {e}\n{}", script.to_text()));
        assert_eq!(position(step), source, "{capability}");
        let helpers = count(
            &engine,
            &format!(
                "SELECT count(*) FROM information_schema.columns WHERE table_name = '{step}' AND column_name LIKE '\\_\\_%' ESCAPE '\\'"
            ),
        );
        assert_eq!(helpers, 0, "{capability}");
    }
}
