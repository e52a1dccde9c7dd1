//! Running the golden pipelines as the engine tests do: a case on the embedded engine and in
//! another mode (its native stages' nodes computed by a given runner: this machine, a cluster),
//! each result loaded back as a table, the two compared row by row.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support code

use std::collections::BTreeMap;
use std::path::Path;

use super::compare::{differences, rows};
use super::golden::{cases, duckdb_with_sources, has_native_only, repo};
use geomill_backends::duckdb::EmbeddedEngine;
use geomill_backends::executor::{NativeStepReport, RunControl, run_embedded, steps_of};
use geomill_planner::compile;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};

/// Cases whose geometries may differ by more, and why (see `golden_on_postgis.rs`).
pub const LOOSER: [(&str, f64, &str); 1] = [(
    "simplify",
    0.1,
    "the native backend links Debian's GEOS 3.11, DuckDB's spatial a newer one: each result \
         stays within the 0.1 degree tolerance of the input",
)];

/// Cases whose every native stage must run natively (by its kernel), none declining its data.
pub const RUN_NATIVELY: [&str; 16] = [
    "area_length_geodesic",
    "area_length_projected",
    "bbox_prefilter_below_buffer",
    "buffer_degrees",
    "buffer_feet_on_state_plane",
    "buffer_meters_on_lonlat",
    "centroid",
    "classify_by_ring_cities_around_countries",
    "classify_by_ring_metres_on_state_plane",
    "clip_to_africa",
    "convex_hull",
    "erase_africa",
    "simplify",
    "spatial_aggregate_count",
    "spatial_join_cities_countries",
    "union_africa",
];

/// Runs the pipeline `document` on the embedded engine in `mode` (its native stages natively)
/// and loads each job's result GeoPackage as table `{table}_{job}`; answers the native stages'
/// reports. The result written is the step `result` names, or the script's last.
pub fn run(
    engine: &EmbeddedEngine,
    document: &serde_json::Value,
    (mode, vars): (EngineMode, &Vars),
    file: &Path,
    table: &str,
    result: Option<&str>,
) -> Vec<Vec<NativeStepReport>> {
    run_with(
        engine,
        document,
        (mode, vars),
        (file, table, result),
        &RunControl::plain(),
    )
}

/// [`run`], the native stages' nodes computed by `control.nodes`.
pub fn run_with(
    engine: &EmbeddedEngine,
    document: &serde_json::Value,
    (mode, vars): (EngineMode, &Vars),
    (file, table, result): (&Path, &str, Option<&str>),
    control: &RunControl<'_>,
) -> Vec<Vec<NativeStepReport>> {
    let catalog: Catalog =
        serde_json::from_str(&std::fs::read_to_string(repo().join("golden/catalog.json")).unwrap())
            .unwrap();
    let mut reports = Vec::new();
    for (job, planned) in compile(document, &catalog, vars, mode)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        let script = emit(&planned.optimized, Dialect::Duckdb).unwrap();
        let steps = steps_of(&planned.optimized, &script);
        let job_file = file.with_extension(format!("{job}.gpkg"));
        let outcome = run_embedded(
            engine,
            &[],
            &steps,
            result.or(script.result.as_deref()).unwrap(),
            Some(geomill_backends::executor::ResultFile {
                path: &job_file.display().to_string(),
                crs: None,
            }),
            control,
        )
        .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        engine
            .execute_batch(&format!(
                // The GeoPackage's fid numbers rows in the order written: not part of a result.
                "CREATE OR REPLACE TABLE \"{table}_{job}\" AS SELECT * EXCLUDE (fid) FROM ST_Read('{}')",
                job_file.display()
            ))
            .unwrap();
        reports.push(outcome.native);
    }
    reports
}

/// Fails unless there is no failure and every case of [`RUN_NATIVELY`] ran by its kernels.
pub fn check_ran_natively(
    mut failures: Vec<String>,
    native_by_case: &BTreeMap<String, Vec<NativeStepReport>>,
) {
    for name in RUN_NATIVELY {
        let reports = &native_by_case[name];
        if reports.is_empty() || reports.iter().any(|r| r.declined.is_some()) {
            failures.push(format!("{name} did not run natively: {reports:?}"));
        }
    }
    let ran: usize = native_by_case
        .values()
        .flatten()
        .filter(|r| r.declined.is_none())
        .count();
    eprintln!("{ran} native stages ran by their kernels: {native_by_case:#?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs every golden case on the embedded engine and in `mode` (its nodes computed by
/// `control.nodes`): answers the differences found and each case's native stages in `mode`.
pub fn compared_with_embedded(
    mode: EngineMode,
    control: &RunControl<'_>,
) -> (Vec<String>, BTreeMap<String, Vec<NativeStepReport>>) {
    let engine = duckdb_with_sources();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("exports");
    std::fs::create_dir_all(&output).unwrap();
    let output_dir = format!("output_dir={}", output.display());
    let vars = Vars::from_pairs(["date=2026-01-01", output_dir.as_str(), "mode=quick"]).unwrap();
    let cases = cases("duckdb.sql");
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut native_by_case: BTreeMap<String, Vec<NativeStepReport>> = BTreeMap::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("pipeline.json")).unwrap())
                .unwrap();
        let embedded = run(
            &engine,
            &document,
            (EngineMode::Embedded, &vars),
            &dir.path().join(format!("{name}-embedded")),
            &format!("{name}_embedded"),
            None,
        );
        let native = run_with(
            &engine,
            &document,
            (mode, &vars),
            (
                &dir.path().join(format!("{name}-native")),
                &format!("{name}_native"),
                None,
            ),
            control,
        );
        // Embedded mode runs natively exactly the stages its script marks so (steps no SQL
        // engine computes, whole-layer dissolves, points per polygon).
        let sql = std::fs::read_to_string(case.join("duckdb.sql")).unwrap();
        let marked = sql.matches("-- runs natively").count();
        let ran: usize = embedded.iter().map(Vec::len).sum();
        assert!(
            ran == marked || has_native_only(&sql),
            "{name}: {marked} stage(s) marked native, {embedded:?}"
        );
        let distance = LOOSER.iter().find(|(n, ..)| *n == name).map(|(_, d, _)| *d);
        for job in 0..native.len() {
            let expected = rows(&engine, &format!("{name}_embedded_{job}"));
            let actual = rows(&engine, &format!("{name}_native_{job}"));
            let found = differences(&expected, &actual, distance);
            if !found.is_empty() {
                failures.push(format!("{name} (job {job}): {}", found.join("; ")));
            }
        }
        native_by_case.insert(name, native.into_iter().flatten().collect());
    }
    (failures, native_by_case)
}
