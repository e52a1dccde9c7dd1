//! The standard workloads on the native backend, on embedded DuckDB SQL and on PostGIS SQL in
//! one run: median time per engine and the ratio to the fastest, native with 1 and 2 rayon
//! threads, and the peak RSS of the native point-in-polygon run (measured in a child process of
//! its own). Point-in-polygon goes file to result for native and DuckDB (GeoParquet in,
//! GeoParquet out; PostgreSQL cannot read the files, so PostGIS starts from its tables); the
//! other workloads start from data already in each engine (DuckDB and PostGIS tables, Arrow
//! layers) and materialise their result. `make bench-native` (a throw-away PostGIS through
//! GEOMILL_POSTGIS_DSN; without it the PostGIS column is left out); GEOMILL_BENCH_SCALE shrinks
//! the sizes, GEOMILL_BENCH_RUNS sets the runs, GEOMILL_BENCH_LIMIT_S the longest SQL run,
//! GEOMILL_BENCH_WORKLOADS picks some (`1,3`: numbered as printed).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // a benchmark binary

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::executor;
use geomill_backends::postgis::PostgisEngine;
use geomill_native::{aggregate, dissolve, geometry_ops, joins, read_geoparquet, write_geoparquet};
use geomill_planner::plan::operator::{AggFunc, AggItem, RefColumns, SpatialPredicate};

#[path = "common/generators.rs"]
mod generators;
#[path = "common/timing.rs"]
mod timing;
use generators::{points, polygons};
use timing::{Timing, median, print_row, run_duckdb, run_postgis, setting, sql_step};

/// 500 m as degrees of longitude at the equator (WGS 84 semi-major axis): the distance join
/// runs in CRS units, as `ST_DWithin` on longitude/latitude does.
const METRES_PER_DEGREE: f64 = 6_378_137.0 * std::f64::consts::PI / 180.0;

fn aggregates() -> Vec<AggItem> {
    vec![
        AggItem {
            output: "count".into(),
            func: AggFunc::Count,
            column: None,
        },
        AggItem {
            output: "value_sum".into(),
            func: AggFunc::Sum,
            column: Some("value".into()),
        },
    ]
}

/// Native point-in-polygon, file to result: returns the result's rows and the seconds of each
/// phase (read the polygons, read the points, aggregate, write).
fn native_pip(zones: &Path, points: &Path, out: &Path) -> (usize, [f64; 4]) {
    let mut lap = Instant::now();
    let mut phase = || {
        let seconds = lap.elapsed().as_secs_f64();
        lap = Instant::now();
        seconds
    };
    let zones = read_geoparquet(zones, None).unwrap();
    let read_zones = phase();
    let points = read_geoparquet(points, Some(&["value"])).unwrap();
    let read_points = phase();
    let counted =
        aggregate::spatial_aggregate(&zones, &points, SpatialPredicate::Within, &aggregates())
            .unwrap();
    let aggregated = phase();
    write_geoparquet(&counted, out).unwrap();
    let written = phase();
    (
        counted.num_rows(),
        [read_zones, read_points, aggregated, written],
    )
}

/// The peak resident set of this process, in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn time_native(pool: &rayon::ThreadPool, runs: usize, work: &(dyn Fn() + Sync)) -> Timing {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                pool.install(work);
                Timing::Took(start.elapsed())
            })
            .collect(),
        Duration::MAX,
    )
}

struct Workload<'a> {
    label: String,
    /// DuckDB SQL creating table `result`.
    sql: String,
    /// The same work as PostGIS SQL (a temporary table `result`).
    postgis: String,
    native: Box<dyn Fn() + Sync + 'a>,
}

fn main() {
    let dir = std::env::var("GEOMILL_BENCH_DIR").map_or_else(
        |_| std::env::temp_dir().join("geomill-bench-native"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    let (zones_file, points_file) = (dir.join("zones_3k.parquet"), dir.join("points_1m.parquet"));
    if std::env::var_os("GEOMILL_BENCH_PIP_CHILD").is_some() {
        let start = Instant::now();
        let (rows, phases) = native_pip(&zones_file, &points_file, &dir.join("native_rss.parquet"));
        println!(
            "{rows} {:.3} {:.1} {:.3} {:.3} {:.3} {:.3}",
            start.elapsed().as_secs_f64(),
            peak_rss_mib(),
            phases[0],
            phases[1],
            phases[2],
            phases[3]
        );
        return;
    }
    let scale = setting("GEOMILL_BENCH_SCALE", 1.0);
    let runs = setting("GEOMILL_BENCH_RUNS", 5.0).max(1.0) as usize;
    let limit = Duration::from_secs_f64(setting("GEOMILL_BENCH_LIMIT_S", 60.0));
    let count = |n: f64| ((n * scale).round() as u64).max(10);
    let duck = EmbeddedEngine::open(&EmbeddedOptions::default()).unwrap();
    let started = Instant::now();
    polygons(&duck, "zones_3k", count(3_025.0));
    polygons(&duck, "zones_20k", count(20_164.0));
    polygons(&duck, "zones_100k", count(100_000.0));
    points(&duck, "points_1m", count(1_000_000.0));
    points(&duck, "points_100k", count(100_000.0));
    for (table, file) in [("zones_3k", &zones_file), ("points_1m", &points_file)] {
        duck.execute_batch(&format!(
            "COPY {table} TO '{}' (FORMAT parquet)",
            file.display()
        ))
        .unwrap();
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dsn = std::env::var("GEOMILL_POSTGIS_DSN").ok();
    let postgis = dsn.as_deref().map(|dsn| {
        for table in [
            "zones_3k",
            "zones_20k",
            "zones_100k",
            "points_1m",
            "points_100k",
        ] {
            duck.copy_to_postgis(
                dsn,
                &format!("SELECT * FROM {table}"),
                ("public", table),
                Some(4326),
            )
            .unwrap();
        }
        PostgisEngine::new(dsn).unwrap()
    });
    let crs = Some("EPSG:4326".to_owned());
    let layer = |t: &str| executor::table_layer(&duck, t, "geom", crs.clone()).unwrap();
    let loaded = Instant::now();
    let (zones_20k, zones_100k) = (layer("zones_20k"), layer("zones_100k"));
    let (points_1m, points_100k) = (layer("points_1m"), layer("points_100k"));
    println!(
        "inputs generated in {:.1} s; DuckDB tables to Arrow layers (Arrow export, WKB) in {:.2} s",
        (loaded - started).as_secs_f64(),
        loaded.elapsed().as_secs_f64()
    );
    let d = 500.0 / METRES_PER_DEGREE;
    let out = dir.join("pip_result.parquet");
    let files = (zones_file.display(), points_file.display());
    let workloads: Vec<Workload<'_>> = vec![
        Workload {
            label: format!("point in polygon, file to result ({} in {})", count(1e6), count(3025.0)),
            sql: format!(
                "CREATE OR REPLACE TEMP TABLE result AS SELECT 1;
                 COPY (SELECT z.id, z.weight, z.geom, count(p.value) AS count, sum(p.value) AS value_sum
                       FROM read_parquet('{}') z LEFT JOIN read_parquet('{}') p ON ST_Within(p.geom, z.geom)
                       GROUP BY ALL) TO '{}' (FORMAT parquet)",
                files.0, files.1, dir.join("pip_duckdb.parquet").display()
            ),
            postgis: "CREATE TEMP TABLE result AS SELECT z.id, z.weight, z.geom, count(p.value) AS count,
                       sum(p.value) AS value_sum FROM zones_3k z LEFT JOIN points_1m p ON ST_Within(p.geom, z.geom)
                       GROUP BY z.id, z.weight, z.geom".into(),
            native: Box::new(|| {
                native_pip(&zones_file, &points_file, &out);
            }),
        },
        Workload {
            label: format!("distance join 500 m ({} to {})", count(1e6), count(20164.0)),
            sql: format!(
                "CREATE OR REPLACE TEMP TABLE result AS SELECT t.*, r.id AS ref_id FROM points_1m t
                 JOIN zones_20k r ON ST_DWithin(t.geom, r.geom, {d})"
            ),
            postgis: format!(
                "CREATE TEMP TABLE result AS SELECT t.*, r.id AS ref_id FROM points_1m t
                 JOIN zones_20k r ON ST_DWithin(t.geom, r.geom, {d})"
            ),
            native: Box::new(|| {
                joins::points_polygons_join(&points_1m, &zones_20k, SpatialPredicate::Dwithin, Some(d), &["id".into()])
                    .unwrap();
            }),
        },
        Workload {
            label: format!("k=5 nearest ({} among {})", count(1e5), count(20164.0)),
            sql: "CREATE OR REPLACE TEMP TABLE result AS SELECT t.*, n.* FROM points_100k t LEFT JOIN LATERAL (
                    SELECT ST_Distance(t.geom, r.geom) AS distance, r.id AS ref_id FROM zones_20k r
                    ORDER BY distance, r.id LIMIT 5) n ON true".into(),
            // The GiST index answers `<->` (KNN), exact for geometries.
            postgis: "CREATE TEMP TABLE result AS SELECT t.*, n.* FROM points_100k t LEFT JOIN LATERAL (
                    SELECT ST_Distance(t.geom, r.geom) AS distance, r.id AS ref_id FROM zones_20k r
                    ORDER BY r.geom <-> t.geom LIMIT 5) n ON true".into(),
            native: Box::new(|| {
                joins::nearest(&points_100k, &zones_20k, 5, None, "distance", &RefColumns::Only(vec!["id".into()])).unwrap();
            }),
        },
        Workload {
            label: format!("buffer 100 m + dissolve ({})", count(1e5)),
            sql: {
                let aeqd = "'+proj=aeqd +lat_0=' || ST_Y(geom) || ' +lon_0=' || ST_X(geom) || ' +datum=WGS84 +units=m +no_defs'";
                format!(
                    "CREATE OR REPLACE TEMP TABLE result AS SELECT ST_Union_Agg(geom) AS geom FROM (
                       SELECT ST_Transform(ST_Buffer(ST_Transform(geom, 'EPSG:4326', {aeqd}, always_xy := true), 100, 8), {aeqd},
                         '+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X(geom) || ' +no_defs', always_xy := true) AS geom
                       FROM points_100k)"
                )
            },
            // PostGIS's own metre buffer (geography: a projection chosen per feature).
            postgis: "CREATE TEMP TABLE result AS SELECT ST_Union(ST_Buffer(geom::geography, 100, 8)::geometry)
                       AS geom FROM points_100k".into(),
            native: Box::new(|| {
                let halo = geometry_ops::buffer(&points_100k, 100.0, true, 8).unwrap();
                dissolve::dissolve(&halo).unwrap();
            }),
        },
        Workload {
            label: format!("simplify, topology kept ({} polygons)", count(1e5)),
            sql: "CREATE OR REPLACE TEMP TABLE result AS SELECT id, weight,
                    ST_SimplifyPreserveTopology(geom, 0.01) AS geom FROM zones_100k".into(),
            postgis: "CREATE TEMP TABLE result AS SELECT id, weight,
                    ST_SimplifyPreserveTopology(geom, 0.01) AS geom FROM zones_100k".into(),
            native: Box::new(|| {
                geometry_ops::simplify(&zones_100k, 0.01, true).unwrap();
            }),
        },
    ];
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (one, two) = (pool(1), pool(2));
    println!(
        "\nmedian of {runs} runs, 2 cores; ratio to the fastest; DuckDB runs stop after {} s\n",
        limit.as_secs()
    );
    println!(
        "{:<56} {:>19} {:>19} {:>19} {:>19}",
        "workload", "native (2 threads)", "native (1 thread)", "embedded DuckDB SQL", "PostGIS SQL"
    );
    let only: Option<Vec<usize>> = std::env::var("GEOMILL_BENCH_WORKLOADS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect());
    for (n, w) in workloads.iter().enumerate() {
        if only.as_ref().is_some_and(|o| !o.contains(&(n + 1))) {
            continue;
        }
        let native2 = time_native(&two, runs, &*w.native);
        let native1 = time_native(&one, runs, &*w.native);
        let sql = median(
            (0..runs)
                .map(|_| run_duckdb(&duck, &sql_step(&w.sql), "result", limit))
                .collect(),
            limit,
        );
        let on_postgis = match &postgis {
            Some(engine) => median(
                (0..runs)
                    .map(|_| run_postgis(&runtime, engine, &w.postgis, limit))
                    .collect(),
                limit,
            ),
            None => Timing::Failed("no GEOMILL_POSTGIS_DSN".into()),
        };
        print_row(
            &w.label,
            56,
            19,
            &[
                ("native, 2 threads", &native2),
                ("native, 1 thread", &native1),
                ("DuckDB", &sql),
                ("PostGIS", &on_postgis),
            ],
        );
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .env("GEOMILL_BENCH_PIP_CHILD", "1")
        .env("GEOMILL_BENCH_DIR", &dir)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&child.stdout);
    let fields: Vec<&str> = report.split_whitespace().collect();
    if let [rows, secs, rss, zones, points, aggregate, write] = fields.as_slice() {
        println!(
            "\nnative point in polygon in a fresh process (2 threads): {rows} polygons in {secs} s, peak RSS {rss} MiB\n  \
             where the time goes: read polygons {zones} s, read points {points} s, aggregate {aggregate} s, write {write} s"
        );
    } else {
        println!(
            "\nthe peak-RSS run failed: {report} {}",
            String::from_utf8_lossy(&child.stderr)
        );
    }
}
