//! The standard workloads on each engine in one run: point-in-polygon count and sum of
//! 1,000,000 clustered points over ~3,000 irregular polygons; 100 m buffer + dissolve of
//! 100,000 points; nearest polygon (of 20,000) to each of 100,000 points. The data is generated
//! from fixed seeds in DuckDB and copied once into PostGIS (the copy is timed on its own, the
//! workloads then run where the data lives). Each workload is planned for each engine and run
//! as the engine runs it: embedded and PostGIS as their SQL, native as DuckDB with the native
//! stages by their kernels, hybrid as PostGIS with the native stages moved out and back (the
//! data stays in PostGIS). The table gives medians and the ratio to the fastest engine.
//! `make bench-engines` (a throw-away PostGIS; GEOMILL_BENCH_SCALE shrinks the sizes,
//! GEOMILL_BENCH_RUNS sets the runs, GEOMILL_BENCH_LIMIT_S the longest run).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // a benchmark binary

use std::time::{Duration, Instant};

use std::sync::Arc;

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::executor::steps_of;
use geomill_backends::executor::{HybridRun, ScriptStep};
use geomill_backends::postgis::PostgisEngine;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::plan::Plan;
use geomill_planner::schema::{Catalog, Column, FieldType, Schema};
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};
use serde_json::{Value, json};

#[path = "common/generators.rs"]
mod generators;
#[path = "common/timing.rs"]
mod timing;
use generators::{points, polygons};
use timing::{Timing, median, print_row, run_duckdb, run_postgis, setting, sql_step};

fn schema(value: &str) -> Schema {
    Schema {
        columns: vec![
            Column {
                name: "id".into(),
                ty: FieldType::Integer,
            },
            Column {
                name: value.into(),
                ty: FieldType::Integer,
            },
            Column {
                name: "geom".into(),
                ty: FieldType::Geometry,
            },
        ],
        crs: Some("EPSG:4326".into()),
    }
}

struct Workload {
    label: String,
    pipeline: Value,
}

fn workloads(zones: &str, big_points: &str, points: &str, many_zones: &str) -> Vec<Workload> {
    vec![
        Workload {
            label: format!("point in polygon: count, sum ({big_points} in {zones})"),
            pipeline: json!({"name": "pip", "steps": [{"id": "counted", "capability": "spatial_aggregate",
                "input": zones, "params": {"ref_layer": big_points, "predicate": "within",
                "agg": {"*": "count", "value": "sum"}}}]}),
        },
        Workload {
            label: format!("buffer 100 m + dissolve ({points})"),
            pipeline: json!({"name": "halo", "steps": [
                {"id": "halo", "capability": "buffer", "input": points, "params": {"distance": 100, "unit": "meters"}},
                {"id": "merged", "capability": "dissolve", "params": {}}]}),
        },
        Workload {
            label: format!("nearest polygon ({points} to {many_zones})"),
            pipeline: json!({"name": "near", "steps": [{"id": "near", "capability": "nearest_neighbor",
                "input": points, "params": {"ref_layer": many_zones, "columns": ["id"]}}]}),
        },
    ]
}

/// Schema of the hybrid runs' tables: where the sources are, as a run's scratch schema holds
/// its sources.
const HYBRID_SCHEMA: &str = "public";

fn run_hybrid(
    runtime: &tokio::runtime::Runtime,
    hybrid: &HybridRun<'_>,
    steps: &[ScriptStep],
    limit: Duration,
) -> Timing {
    let (cancel, watchdog) = timing::cancel_after(limit);
    let start = Instant::now();
    let outcome = runtime.block_on(hybrid.run_steps(steps, &[], cancel.clone()));
    cancel.cancel();
    let _ = watchdog.join();
    match outcome {
        Ok(outcome) if outcome.native.iter().any(|r| r.declined.is_some()) => {
            Timing::Failed(format!("a kernel declined: {:?}", outcome.native))
        }
        Ok(_) => Timing::Took(start.elapsed()),
        Err(geomill_backends::BackendError::Interrupted { .. }) => Timing::Stopped,
        Err(error) => Timing::Failed(error.to_string()),
    }
}

fn plan_for(pipeline: &Value, catalog: &Catalog, mode: EngineMode) -> Plan {
    let planned = geomill_planner::compile(pipeline, catalog, &Vars::default(), mode).unwrap();
    planned[0].optimized.clone()
}

fn main() {
    let scale = setting("GEOMILL_BENCH_SCALE", 1.0);
    let runs = setting("GEOMILL_BENCH_RUNS", 3.0).max(1.0) as usize;
    let limit = Duration::from_secs_f64(setting("GEOMILL_BENCH_LIMIT_S", 300.0));
    let dsn = std::env::var("GEOMILL_POSTGIS_DSN")
        .expect("GEOMILL_POSTGIS_DSN: run `make bench-engines` (it starts a throw-away PostGIS)");
    let count = |n: f64| ((n * scale).round() as u64).max(10);
    let sizes = [
        ("zones_3k", count(3_025.0)),
        ("zones_20k", count(20_164.0)),
        ("points_1m", count(1_000_000.0)),
        ("points_100k", count(100_000.0)),
    ];
    // Spilling is capped as the server caps it, so a plan that materialises too much fails
    // rather than filling the disk.
    let duck = Arc::new(
        EmbeddedEngine::open(&EmbeddedOptions {
            max_spill_mb: Some(setting("GEOMILL_BENCH_SPILL_MB", 8192.0) as u64),
            ..EmbeddedOptions::default()
        })
        .unwrap(),
    );
    let spill = std::env::temp_dir().join("geomill-bench-spill");
    duck.execute_batch(&format!("SET temp_directory = '{}'", spill.display()))
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let postgis = PostgisEngine::new(&dsn).unwrap();
    let scratch = std::env::temp_dir();
    let hybrid = HybridRun {
        postgis: &postgis,
        embedded: duck.clone(),
        schema: HYBRID_SCHEMA,
        scratch: &scratch,
    };
    let mut catalog = Catalog::default();
    for (table, n) in sizes {
        let started = Instant::now();
        if table.starts_with("zones") {
            polygons(&duck, table, n);
            catalog.sources.insert(table.into(), schema("weight"));
        } else {
            points(&duck, table, n);
            catalog.sources.insert(table.into(), schema("value"));
        }
        let generated = started.elapsed();
        let started = Instant::now();
        duck.copy_to_postgis(
            &dsn,
            &format!("SELECT * FROM {table}"),
            ("public", table),
            Some(4326),
        )
        .unwrap();
        println!(
            "{table}: {n} features, generated in {:.2} s, copied to PostGIS (binary COPY, GiST index) in {:.2} s",
            generated.as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
    }
    println!(
        "\nmedian of {runs} runs, 2 cores; ratio to the fastest engine; runs stop after {} s\n",
        limit.as_secs()
    );
    println!(
        "{:<58} {:>20} {:>20} {:>20} {:>20}",
        "workload", "embedded (DuckDB)", "postgis", "native", "hybrid"
    );
    let mut plans = Vec::new();
    for workload in workloads("zones_3k", "points_1m", "points_100k", "zones_20k") {
        let plan = plan_for(&workload.pipeline, &catalog, EngineMode::Embedded);
        let duck_script = emit(&plan, Dialect::Duckdb).unwrap();
        let pg_script = emit(&plan, Dialect::Postgis).unwrap();
        let result = duck_script.result.clone().unwrap();
        let native_plan = plan_for(&workload.pipeline, &catalog, EngineMode::Native);
        let native_steps = steps_of(&native_plan, &emit(&native_plan, Dialect::Duckdb).unwrap());
        let hybrid_plan = plan_for(&workload.pipeline, &catalog, EngineMode::Hybrid);
        let hybrid_steps = steps_of(&hybrid_plan, &emit(&hybrid_plan, Dialect::Postgis).unwrap());
        plans.push((workload.label.clone(), hybrid_plan.explain()));
        let embedded = median(
            (0..runs)
                .map(|_| run_duckdb(&duck, &sql_step(&duck_script.to_text()), &result, limit))
                .collect(),
            limit,
        );
        let on_postgis = median(
            (0..runs)
                .map(|_| run_postgis(&runtime, &postgis, &pg_script.to_text(), limit))
                .collect(),
            limit,
        );
        let native = median(
            (0..runs)
                .map(|_| run_duckdb(&duck, &native_steps, &result, limit))
                .collect(),
            limit,
        );
        let on_hybrid = median(
            (0..runs)
                .map(|_| run_hybrid(&runtime, &hybrid, &hybrid_steps, limit))
                .collect(),
            limit,
        );
        let timings = [
            ("embedded", &embedded),
            ("postgis", &on_postgis),
            ("native", &native),
            ("hybrid", &on_hybrid),
        ];
        print_row(&workload.label, 58, 20, &timings);
    }
    println!("\nhybrid plans (engine per node, and why):");
    for (label, explain) in plans {
        println!("  {label}\n{explain}");
    }
}
