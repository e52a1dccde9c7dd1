//! The standard workloads on each engine in one run: point-in-polygon count and sum of
//! 1,000,000 clustered points over ~3,000 irregular polygons; 100 m buffer + dissolve of
//! 100,000 points; nearest polygon (of 20,000) to each of 100,000 points. The data is generated
//! from fixed seeds in DuckDB and copied once into PostGIS (the copy is timed on its own, the
//! workloads then run where the data lives). Each workload is planned once and run as each
//! engine's SQL; the table gives medians and the ratio to the fastest engine.
//! `make bench-engines` (a throw-away PostGIS; GEOMILL_BENCH_SCALE shrinks the sizes,
//! GEOMILL_BENCH_RUNS sets the runs, GEOMILL_BENCH_LIMIT_S the longest run).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // a benchmark binary

use std::time::{Duration, Instant};

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::postgis::PostgisEngine;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::{Catalog, Column, FieldType, Schema};
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};
use serde_json::{Value, json};

#[path = "common/generators.rs"]
mod generators;
#[path = "common/timing.rs"]
mod timing;
use generators::{points, polygons};
use timing::{Timing, median, run_duckdb, setting, show};

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

fn run_postgis(
    runtime: &tokio::runtime::Runtime,
    engine: &PostgisEngine,
    sql: &str,
    limit: Duration,
) -> Timing {
    let start = Instant::now();
    let outcome =
        runtime.block_on(engine.run_script("public", sql, &[], &|| start.elapsed() >= limit));
    match outcome {
        Ok(()) => Timing::Took(start.elapsed()),
        Err(geomill_backends::BackendError::Interrupted { .. }) => Timing::Stopped,
        Err(error) => Timing::Failed(error.to_string()),
    }
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
    let duck = EmbeddedEngine::open(&EmbeddedOptions {
        max_spill_mb: Some(setting("GEOMILL_BENCH_SPILL_MB", 8192.0) as u64),
        ..EmbeddedOptions::default()
    })
    .unwrap();
    let spill = std::env::temp_dir().join("geomill-bench-spill");
    duck.execute_batch(&format!("SET temp_directory = '{}'", spill.display()))
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let postgis = PostgisEngine::new(&dsn).unwrap();
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
        "{:<58} {:>20} {:>20} {:>10}",
        "workload", "embedded (DuckDB)", "postgis", "hybrid"
    );
    for workload in workloads("zones_3k", "points_1m", "points_100k", "zones_20k") {
        let planned = geomill_planner::compile(
            &workload.pipeline,
            &catalog,
            &Vars::default(),
            EngineMode::Embedded,
        )
        .unwrap();
        let plan = &planned[0].optimized;
        let duck_script = emit(plan, Dialect::Duckdb).unwrap();
        let pg_script = emit(plan, Dialect::Postgis).unwrap();
        let result = duck_script.result.clone().unwrap();
        let embedded = median(
            (0..runs)
                .map(|_| run_duckdb(&duck, &duck_script.to_text(), &result, limit))
                .collect(),
            limit,
        );
        let on_postgis = median(
            (0..runs)
                .map(|_| run_postgis(&runtime, &postgis, &pg_script.to_text(), limit))
                .collect(),
            limit,
        );
        let fastest = [&embedded, &on_postgis]
            .iter()
            .filter_map(|t| match t {
                Timing::Took(d) => Some(*d),
                _ => None,
            })
            .min()
            .unwrap_or(limit);
        println!(
            "{:<58} {:>20} {:>20} {:>10}",
            workload.label,
            show(&embedded, fastest),
            show(&on_postgis, fastest),
            "not built"
        );
        for (engine, timing) in [("embedded", &embedded), ("postgis", &on_postgis)] {
            if let Timing::Failed(reason) = timing {
                println!(
                    "    {engine} failed: {}",
                    reason.lines().next().unwrap_or_default()
                );
            }
        }
    }
}
