//! The second standard workload: a user's real-shaped files (`benches/real_layers.py`: ~3,000
//! regions of densified, noisy coastline with holes, invalid polygons, NULL and empty
//! geometries; 1,000,000 clustered points in GeoParquet), uploaded through `/datasets/upload`
//! and run through `/api/pipelines/execute` on every engine, as a user runs them: the time of a
//! run is the request's, file written included. Beside them, the same question as hand-written
//! SQL on the same stored tables (DuckDB, PostGIS) and as GeoPandas code in the same machine's
//! Python. The aggregate's answers (total count, total sum) are checked equal on every engine
//! and against the hand-written SQL.
//!
//! `make bench-real` (a throw-away PostGIS; GEOMILL_BENCH_SCALE shrinks the points,
//! GEOMILL_BENCH_RUNS sets the runs, GEOMILL_BENCH_LIMIT_S the time after which a workload's
//! runs on an engine are not repeated, GEOMILL_BENCH_ONLY=<words>[,<words>] the workloads whose
//! label holds them, GEOMILL_BENCH_ENGINES=<name>[,<name>] the engines run).
//!
//! The regions stay within 84° of latitude: the GeoPandas reference buffers in Web Mercator,
//! which has no coordinates for the poles, so regions reaching them would give it infinite
//! coordinates (and the comparison would be of different answers).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // a benchmark binary

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use geomill::config::Config;
use geomill::state::AppState;
use geomill_planner::optimizer::EngineMode;
use serde_json::{Value, json};

#[path = "common/timing.rs"]
#[allow(dead_code)]
mod timing;
use timing::{Timing, median, print_row, setting, statements};

#[path = "common/app.rs"]
mod app;
use app::{call, upload};

/// The tests' and benches' Python (GeoPandas installed by `scripts/setup.sh test`).
fn python() -> String {
    std::env::var("GEOMILL_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// `<dataset id>/<layer>` of an uploaded dataset's first layer, and its stored table.
fn source(state: &AppState, dataset: &Value) -> (String, String) {
    let id = dataset["id"].as_str().unwrap();
    let (_, records) = state.store().datasets(i64::MAX, 0).unwrap();
    let record = records.into_iter().find(|d| d.id == id).unwrap();
    let layer = &record.layers[0];
    (format!("{id}/{}", layer.name), layer.table_name.clone())
}

/// One engine's run of `pipeline` through `/api/pipelines/execute`; the run's answer.
async fn execute(state: &AppState, pipeline: &Value, engine: &str) -> Result<Value, String> {
    let body = json!({"pipeline": pipeline, "engine": engine});
    let request = Request::post("/api/pipelines/execute")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, answer) = call(state, request).await;
    if status == StatusCode::OK {
        Ok(answer)
    } else {
        Err(format!("{status}: {answer}"))
    }
}

/// Total count and total sum (in hundredths) of an aggregate's answer in `from`.
fn totals(state: &AppState, from: &str) -> (i64, i64) {
    let engine = state.embedded();
    (
        engine
            .query_i64(&format!("SELECT sum(\"count\")::BIGINT FROM {from}"))
            .unwrap(),
        engine
            .query_i64(&format!(
                "SELECT round(sum(value_sum) * 100)::BIGINT FROM {from}"
            ))
            .unwrap(),
    )
}

/// A result file as a DuckDB table expression.
fn file(path: &str) -> String {
    format!("ST_Read('{}')", path.replace('\'', "''"))
}

/// Median time of `runs` runs of `work` (which answers whether it succeeded); a run that
/// takes longer than `limit` is not repeated.
fn timed(runs: usize, limit: Duration, mut work: impl FnMut() -> Result<(), String>) -> Timing {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let outcome = match work() {
            Ok(()) => Timing::Took(start.elapsed()),
            Err(reason) => Timing::Failed(reason),
        };
        let over = matches!(outcome, Timing::Took(took) if took >= limit);
        samples.push(outcome);
        if over {
            return Timing::Stopped;
        }
    }
    median(samples, limit)
}

/// Whether `name` is among the comma-separated names of environment variable `variable`
/// (everything is, when it is unset).
fn chosen(variable: &str, name: &str) -> bool {
    std::env::var(variable).map_or(true, |list| {
        list.split(',')
            .any(|wanted| !wanted.trim().is_empty() && name.contains(wanted.trim()))
    })
}

/// Runs a GeoPandas script that prints its own time (seconds, file to result) as its last line.
fn geopandas(script: &str, args: &[&Path]) -> Result<Duration, String> {
    let output = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let seconds: f64 = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("no time in {text}"))?;
    Ok(Duration::from_secs_f64(seconds))
}

// GeoPandas from file to result file, as a geomill run goes (its result is written as a
// GeoPackage): Web Mercator for metres (faster than a projection per feature, and less exact
// away from the equator).
const GEOPANDAS_BUFFER: &str = r"
import sys, os, tempfile, time, geopandas as gpd
start = time.perf_counter()
g = gpd.read_file(sys.argv[1], engine='pyogrio')
g['geometry'] = g.geometry.to_crs(3857).buffer(1000).to_crs(4326)
g.to_file(os.path.join(tempfile.mkdtemp(), 'out.gpkg'), engine='pyogrio')
print(time.perf_counter() - start)
";

// The same buffer with honest metres everywhere, as a GeoPandas user does it on a layer spanning
// the world: each feature in the UTM zone of its centroid (`estimate_utm_crs` per zone).
const GEOPANDAS_BUFFER_UTM: &str = r"
import sys, os, tempfile, time, geopandas as gpd, numpy as np, pandas as pd
start = time.perf_counter()
g = gpd.read_file(sys.argv[1], engine='pyogrio')
c = g.geometry.centroid
zone = (np.floor((c.x + 180) / 6) % 60 + 1).fillna(0).astype(int)
epsg = np.where(c.y >= 0, 32600, 32700) + zone
parts = []
for code, rows in g.groupby(epsg).groups.items():
    geometry = g.geometry.loc[rows]
    parts.append(geometry if code % 100 == 0 else geometry.to_crs(int(code)).buffer(1000).to_crs(4326))
g['geometry'] = pd.concat(parts).reindex(g.index)
g.to_file(os.path.join(tempfile.mkdtemp(), 'out.gpkg'), engine='pyogrio')
print(time.perf_counter() - start)
";

const GEOPANDAS_DISSOLVE: &str = r"
import sys, os, tempfile, time, geopandas as gpd
start = time.perf_counter()
g = gpd.read_file(sys.argv[1], engine='pyogrio')
g['geometry'] = g.geometry.make_valid()
out = g.dissolve()
out.to_file(os.path.join(tempfile.mkdtemp(), 'out.gpkg'), engine='pyogrio')
print(time.perf_counter() - start)
";

const GEOPANDAS_AGGREGATE: &str = r"
import sys, os, tempfile, time, geopandas as gpd
start = time.perf_counter()
regions = gpd.read_file(sys.argv[1], engine='pyogrio')
points = gpd.read_parquet(sys.argv[2])
pairs = gpd.sjoin(points[['value', 'geometry']], regions[['geometry']], predicate='within')
agg = pairs.groupby('index_right')['value'].agg(['count', 'sum'])
regions = regions.join(agg.rename(columns={'sum': 'value_sum'}))
regions['count'] = regions['count'].fillna(0).astype('int64')
regions.to_file(os.path.join(tempfile.mkdtemp(), 'out.gpkg'), engine='pyogrio')
print(time.perf_counter() - start)
";

fn main() {
    let scale = setting("GEOMILL_BENCH_SCALE", 1.0);
    let runs = setting("GEOMILL_BENCH_RUNS", 3.0).max(1.0) as usize;
    let limit = Duration::from_secs_f64(setting("GEOMILL_BENCH_LIMIT_S", 300.0));
    let dsn = std::env::var("GEOMILL_POSTGIS_DSN")
        .expect("GEOMILL_POSTGIS_DSN: run `make bench-real` (it starts a throw-away PostGIS)");
    let work = tempfile::tempdir().unwrap();
    let n_points = ((1_000_000.0 * scale).round() as u64).max(1_000);
    let started = Instant::now();
    let made = Command::new(python())
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/real_layers.py"))
        .arg(work.path())
        .args(["--points", &n_points.to_string(), "--max-lat", "84"])
        .status()
        .unwrap();
    assert!(made.success(), "benches/real_layers.py failed");
    let regions_file = work.path().join("regions.gpkg");
    let points_file = work.path().join("points.parquet");
    println!(
        "files made in {:.1} s: regions.gpkg ({} kB), points.parquet ({n_points} points, {} kB)",
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&regions_file).unwrap().len() / 1024,
        std::fs::metadata(&points_file).unwrap().len() / 1024
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Portable mode (embedded and native runs) and persistent mode (data in PostgreSQL;
    // postgis and hybrid runs), each with the files uploaded through the API.
    let mut portable_config = Config::with_data_dir(work.path().join("portable"));
    portable_config.postgis_dsn = Some(dsn.clone());
    let portable = AppState::open(portable_config).unwrap();
    let mut persistent_config = Config::with_data_dir(work.path().join("persistent"));
    persistent_config.engine = EngineMode::Postgis;
    persistent_config.postgis_dsn = Some(dsn);
    let persistent = AppState::open(persistent_config).unwrap();
    let mut sources = Vec::new();
    for (mode, state) in [("portable", &portable), ("persistent", &persistent)] {
        let mut pair = Vec::new();
        for file in [&regions_file, &points_file] {
            let started = Instant::now();
            let dataset = runtime.block_on(upload(state, file));
            println!(
                "{mode}: uploaded {} in {:.2} s: {} features",
                file.file_name().unwrap().to_string_lossy(),
                started.elapsed().as_secs_f64(),
                dataset["layers"][0]["feature_count"]
            );
            pair.push(source(state, &dataset));
        }
        sources.push(pair);
    }
    let [portable_sources, persistent_sources] = [&sources[0], &sources[1]];
    // The stored tables, for the hand-written SQL: DuckDB's schema `layers`, PostgreSQL's
    // `geomill_data`.
    let duck_regions = format!("layers.\"{}\"", portable_sources[0].1);
    let duck_points = format!("layers.\"{}\"", portable_sources[1].1);
    let pg_regions = format!("geomill_data.\"{}\"", persistent_sources[0].1);
    let pg_points = format!("geomill_data.\"{}\"", persistent_sources[1].1);

    let pipeline = |sources: &[(String, String)], steps: Value| -> Value {
        let mut steps = steps;
        steps[0]["input"] = json!(sources[0].0);
        if steps[0]["params"].get("ref_layer").is_some() {
            steps[0]["params"]["ref_layer"] = json!(sources[1].0);
        }
        json!({"name": "bench", "steps": steps})
    };
    let aggregate = json!([{"id": "counted", "capability": "spatial_aggregate",
        "params": {"ref_layer": "points", "predicate": "within", "agg": {"*": "count", "value": "sum"}}}]);
    let buffer = json!([{"id": "halo", "capability": "buffer",
        "params": {"distance": 1000, "unit": "meters"}}]);
    let dissolve = json!([{"id": "merged", "capability": "dissolve", "params": {}}]);

    let hand_duckdb_aggregate = format!(
        "CREATE OR REPLACE TEMP TABLE bench_hand AS SELECT t.*, coalesce(a.n, 0) AS \"count\", a.s AS value_sum \
         FROM {duck_regions} AS t LEFT JOIN (SELECT t.rowid AS k, count(*) AS n, sum(r.value) AS s \
         FROM {duck_regions} AS t JOIN {duck_points} AS r ON ST_Within(r.geom, t.geom) GROUP BY t.rowid) AS a ON a.k = t.rowid"
    );
    let hand_postgis_aggregate = format!(
        "DROP TABLE IF EXISTS bench_hand;\nCREATE TEMP TABLE bench_hand AS SELECT t.*, coalesce(a.n, 0) AS \"count\", a.s AS value_sum \
         FROM {pg_regions} AS t LEFT JOIN (SELECT t.fid AS k, count(*) AS n, sum(r.value) AS s \
         FROM {pg_regions} AS t JOIN {pg_points} AS r ON ST_Within(r.geom, t.geom) GROUP BY t.fid) AS a ON a.k = t.fid"
    );

    println!(
        "\nmedian of {runs} runs, 2 cores; ratio to the fastest column; runs through /api/pipelines/execute \
         (result file written), hand-written SQL as CREATE TABLE on the same stored tables\n"
    );
    println!(
        "{:<34} {:>19} {:>19} {:>19} {:>19} {:>19} {:>19} {:>19}",
        "workload",
        "embedded",
        "native",
        "DuckDB SQL",
        "postgis",
        "hybrid",
        "PostGIS SQL",
        "GeoPandas"
    );
    let workloads = [
        ("point in polygon: count, sum", &aggregate, true),
        ("buffer 1,000 m", &buffer, false),
        ("dissolve", &dissolve, false),
    ];
    let postgis = persistent.postgis().unwrap().clone();
    let mut answers: Vec<(String, (i64, i64))> = Vec::new();
    for (label, steps, is_aggregate) in workloads {
        if !chosen("GEOMILL_BENCH_ONLY", label) {
            continue;
        }
        let mut stages: Vec<(String, Vec<[f64; 3]>)> = Vec::new();
        let mut run_engine = |state: &AppState, sources: &[(String, String)], engine: &str| {
            if !chosen("GEOMILL_BENCH_ENGINES", engine) {
                return Timing::Absent;
            }
            let plan = pipeline(sources, steps.clone());
            let mut last = None;
            let mut seconds = Vec::new();
            let timing = timed(runs, limit, || {
                let answer = runtime.block_on(execute(state, &plan, engine))?;
                seconds.extend(native_seconds(&answer));
                last = Some(answer);
                Ok(())
            });
            if !seconds.is_empty() {
                stages.push((engine.to_owned(), seconds));
            }
            if let (true, Some(answer)) = (is_aggregate, last) {
                let path = answer["result_path"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                answers.push((engine.to_owned(), totals(&portable, &file(&path))));
            }
            timing
        };
        let embedded = run_engine(&portable, portable_sources, "embedded");
        let native = run_engine(&portable, portable_sources, "native");
        let on_postgis = run_engine(&persistent, persistent_sources, "postgis");
        let hybrid = run_engine(&persistent, persistent_sources, "hybrid");
        let (duck_sql, pg_sql, python) = if is_aggregate {
            let duck = timed(runs, limit, || {
                portable
                    .embedded()
                    .execute_batch(&hand_duckdb_aggregate)
                    .map_err(|e| e.to_string())
            });
            answers.push(("DuckDB SQL".into(), totals(&portable, "bench_hand")));
            let pg = timed(runs, limit, || {
                runtime
                    .block_on(postgis.run_script(
                        "public",
                        &statements(&hand_postgis_aggregate),
                        &[],
                        &|| false,
                    ))
                    .map_err(|e| e.to_string())
            });
            let python = timed(runs, limit, || {
                geopandas(GEOPANDAS_AGGREGATE, &[&regions_file, &points_file]).map(|_| ())
            });
            (duck, pg, python)
        } else {
            let script = if label.starts_with("buffer") {
                GEOPANDAS_BUFFER
            } else {
                GEOPANDAS_DISSOLVE
            };
            let python = geopandas_runs(script, &regions_file, runs, limit);
            if label.starts_with("buffer") {
                let utm = geopandas_runs(GEOPANDAS_BUFFER_UTM, &regions_file, runs, limit);
                let utm = match utm {
                    Timing::Took(d) => format!("{:.3} s", d.as_secs_f64()),
                    Timing::Failed(reason) => format!("failed: {reason}"),
                    _ => "stopped at the limit".to_owned(),
                };
                println!("    GeoPandas, metres per UTM zone (honest metres, as geomill's): {utm}");
            }
            (Timing::Absent, Timing::Absent, python)
        };
        print_row(
            label,
            34,
            19,
            &[
                ("embedded", &embedded),
                ("native", &native),
                ("DuckDB SQL", &duck_sql),
                ("postgis", &on_postgis),
                ("hybrid", &hybrid),
                ("PostGIS SQL", &pg_sql),
                ("GeoPandas", &python),
            ],
        );
        if is_aggregate {
            print_answers(&answers);
        }
        for (engine, seconds) in &stages {
            let part = |i: usize| {
                let mut values: Vec<f64> = seconds.iter().map(|s| s[i]).collect();
                values.sort_by(f64::total_cmp);
                values[values.len() / 2]
            };
            println!(
                "    {engine} run's native stages (median): read {:.2} s, kernels {:.2} s, store {:.2} s",
                part(0),
                part(1),
                part(2)
            );
        }
    }
}

/// The native stages' seconds of a run's answer, summed: read, kernels, store.
fn native_seconds(answer: &Value) -> Option<[f64; 3]> {
    let stages = answer["native"].as_array()?;
    let mut total = [0.0; 3];
    for stage in stages {
        for (i, key) in ["read", "kernels", "store"].iter().enumerate() {
            total[i] += stage["seconds"][key].as_f64()?;
        }
    }
    (!stages.is_empty()).then_some(total)
}

/// `runs` runs of a GeoPandas script on `file`, as one timing.
fn geopandas_runs(script: &str, file: &Path, runs: usize, limit: Duration) -> Timing {
    let mut samples = Vec::new();
    for _ in 0..runs {
        samples.push(match geopandas(script, &[file]) {
            Ok(took) => Timing::Took(took),
            Err(reason) => Timing::Failed(reason),
        });
    }
    median(samples, limit)
}

/// Each engine's total count and sum of the point-in-polygon answer, and whether they agree.
fn print_answers(answers: &[(String, (i64, i64))]) {
    println!("    answers (total count, total sum):");
    for (engine, (count, hundredths)) in answers {
        println!(
            "      {engine:<12} {count:>10} {:>16.2}",
            *hundredths as f64 / 100.0
        );
    }
    let same = answers.windows(2).all(|pair| pair[0].1 == pair[1].1);
    println!("      {}", if same { "all equal" } else { "DIFFERENT" });
}
