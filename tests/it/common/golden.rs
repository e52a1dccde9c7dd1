//! The golden cases and the shared datasets they read, for the tests that run golden SQL.

use std::path::PathBuf;

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};

/// The repository root: cargo runs tests there (a path baked in at compile time would go
/// stale when a build cache is shared between checkouts).
pub fn repo() -> PathBuf {
    std::env::current_dir().expect("working directory")
}

fn shared_data(name: &str) -> String {
    repo()
        .join("../shared/data")
        .join(name)
        .display()
        .to_string()
}

/// DuckDB (in memory) with the golden catalog's sources: `countries`, `cities`, `boroughs`.
pub fn duckdb_with_sources() -> EmbeddedEngine {
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

/// The golden case folders that hold `script` (`duckdb.sql`, `postgis.sql`), in name order.
pub fn cases(script: &str) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo().join("golden/pipelines"))
        .expect("golden/pipelines")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(script).exists())
        .collect();
    cases.sort();
    cases
}

/// The table the last `CREATE [OR REPLACE] TEMP TABLE "<name>"` of a script makes (a table
/// every script must leave readable).
pub fn last_table(sql: &str) -> Option<String> {
    sql.lines()
        .filter_map(|l| {
            l.strip_prefix("CREATE TEMP TABLE \"")
                .or_else(|| l.strip_prefix("CREATE OR REPLACE TEMP TABLE \""))
        })
        .next_back()
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
}

/// What the statement of a step no SQL engine computes says when run (the plan gives such
/// steps to the native backend in every engine mode).
const NATIVE_ONLY: &str = "runs on the native backend";

/// Whether a golden script holds a statement only the native backend computes: run as SQL, it
/// must fail saying so.
pub fn has_native_only(sql: &str) -> bool {
    sql.contains(NATIVE_ONLY)
}

/// Checks that running a native-only script failed, naming why.
pub fn failed_as_native_only(result: Result<(), String>) -> Result<(), String> {
    match result {
        Err(error) if error.contains(NATIVE_ONLY) => Ok(()),
        Err(error) => Err(format!("failed for another reason: {error}")),
        Ok(()) => Err("ran, though a step has no SQL".to_owned()),
    }
}

/// The statements of a script the planner printed (`Script::to_text`, a golden file): each ends
/// with `;` at a line's end. Runs hand them to the engines one by one, as the executor does.
pub fn statements(script: &str) -> Vec<String> {
    let code = |s: &&str| {
        s.lines()
            .any(|l| !l.trim().is_empty() && !l.trim().starts_with("--"))
    };
    script
        .split(";\n")
        .filter(code)
        .map(|s| s.trim().to_owned())
        .collect()
}
