//! Spatial statistics and clustering against the Python libraries users come from, in one
//! run on one machine: Moran's I (queen contiguity, global and local, 999 permutations each)
//! on the ~3,000 country pieces of `benches/real_layers.py` (`tiles.gpkg`: neighbours share
//! borders) against PySAL (`libpysal`
//! `Queen` + `esda.Moran` + `esda.Moran_Local`), and k-means and DBSCAN on its 1,000,000
//! clustered points against scikit-learn (`KMeans` from the same initial centres, Lloyd;
//! `DBSCAN` with the haversine metric, eps 5 km). geomill's time is the request's through
//! `/api/pipelines/execute` on the default (embedded) engine, the result file written; the
//! Python side is timed twice: the computation alone, the layer already read into memory (for
//! the kernels), and as a whole process that reads the file and writes its result as a
//! GeoPackage (for the request). Each side's answer is checked equal to the other's before
//! timing counts.
//!
//! `make bench-statistics` (GEOMILL_BENCH_SCALE shrinks the points, GEOMILL_BENCH_RUNS sets
//! the runs).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // a benchmark binary

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use geomill::config::Config;
use geomill::state::AppState;
use serde_json::{Value, json};

#[path = "common/timing.rs"]
#[allow(dead_code)]
mod timing;
use timing::{Timing, median, print_row, setting};

#[path = "common/app.rs"]
mod app;
use app::{call, upload};

/// The tests' and benches' Python (PySAL and scikit-learn installed by `scripts/setup.sh`).
fn python() -> String {
    std::env::var("GEOMILL_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The Python side: runs each workload `runs` times on the file and prints one JSON line per
/// workload with the median seconds and the answer (labels, or Moran's I).
const PEER: &str = r#"
import json, sys, time, warnings
import geopandas as gpd, numpy as np
import libpysal, esda
from sklearn.cluster import DBSCAN, KMeans
warnings.filterwarnings("ignore")
regions_path, points_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
init = np.array(json.loads(sys.argv[4]))

def timed(work):
    times, answer = [], None
    for _ in range(runs):
        start = time.perf_counter()
        answer = work()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), answer

regions = gpd.read_file(regions_path)
regions = regions[regions.geometry.notna() & ~regions.geometry.is_empty & regions["value"].notna()]
regions = regions.reset_index(drop=True)
def moran():
    w = libpysal.weights.Queen.from_dataframe(regions, use_index=False, silence_warnings=True)
    y = regions["value"].to_numpy(float)
    g = esda.Moran(y, w, permutations=999)
    local = esda.Moran_Local(y, w, permutations=999)
    return float(g.I)
seconds, i = timed(moran)
print(json.dumps({"workload": "moran", "seconds": seconds, "answer": i}))

points = gpd.read_parquet(points_path)
xy = np.column_stack([points.geometry.x.to_numpy(), points.geometry.y.to_numpy()])
seconds, labels = timed(lambda: KMeans(n_clusters=len(init), init=init, n_init=1,
                                       algorithm="lloyd", max_iter=300, tol=0).fit(xy).labels_)
print(json.dumps({"workload": "kmeans", "seconds": seconds, "answer": labels.tolist()}))
radians = np.radians(xy[:, ::-1])
seconds, labels = timed(lambda: DBSCAN(eps=5000 / 6371008.8, min_samples=10,
                                       metric="haversine").fit(radians).labels_)
print(json.dumps({"workload": "dbscan", "seconds": seconds, "answer": labels.tolist()}))
"#;

/// The Python side as a user runs it: one fresh process per workload that imports the
/// libraries, reads the file, computes and writes the result as a GeoPackage (as geomill's
/// request writes its result file).
const PEER_PROCESS: &str = r#"
import json, sys, warnings
warnings.filterwarnings("ignore")
import geopandas as gpd, numpy as np
workload, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
if workload == "moran":
    import libpysal, esda
    frame = gpd.read_file(path)
    frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty & frame["value"].notna()]
    frame = frame.reset_index(drop=True)
    w = libpysal.weights.Queen.from_dataframe(frame, use_index=False, silence_warnings=True)
    y = frame["value"].to_numpy(float)
    local = esda.Moran_Local(y, w, permutations=999)
    frame["moran_global_i"] = esda.Moran(y, w, permutations=999).I
    frame["moran_local_i"] = local.Is
    frame["moran_p"] = local.p_sim
else:
    from sklearn.cluster import DBSCAN, KMeans
    frame = gpd.read_parquet(path)
    xy = np.column_stack([frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()])
    if workload == "kmeans":
        init = np.array(json.loads(sys.argv[4]))
        model = KMeans(n_clusters=len(init), init=init, n_init=1, algorithm="lloyd",
                       max_iter=300, tol=0)
        frame["cluster"] = model.fit(xy).labels_
    else:
        frame["cluster"] = DBSCAN(eps=5000 / 6371008.8, min_samples=10,
                                  metric="haversine").fit(np.radians(xy[:, ::-1])).labels_
frame.to_file(out, driver="GPKG")
"#;

/// The median wall time of `runs` fresh processes of [`PEER_PROCESS`] for `workload`.
fn peer_process(workload: &str, input: &Path, init: &Value, runs: usize) -> Duration {
    let out = tempfile::tempdir().unwrap();
    let mut samples = Vec::new();
    for run in 0..runs {
        let result = out.path().join(format!("{workload}-{run}.gpkg"));
        let start = Instant::now();
        let status = Command::new(python())
            .args(["-c", PEER_PROCESS, workload])
            .arg(input)
            .arg(&result)
            .arg(init.to_string())
            .status()
            .unwrap();
        samples.push(start.elapsed());
        assert!(status.success(), "the {workload} process failed");
    }
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `pipeline` on the dataset through the API; answers the time, the result file and the
/// seconds the native stages spent in their kernels and moving data.
async fn execute(state: &AppState, dataset: &str, steps: &Value) -> (Duration, String, [f64; 2]) {
    let body = json!({"dataset_id": dataset, "pipeline": {"name": "bench", "steps": steps}});
    let request = Request::post("/api/pipelines/execute")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let start = Instant::now();
    let (status, answer) = call(state, request).await;
    let took = start.elapsed();
    assert_eq!(status, StatusCode::OK, "{steps}: {answer}");
    let seconds = |key: &str| -> f64 {
        answer["native"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|stage| stage["seconds"][key].as_f64())
            .sum()
    };
    let split = [seconds("kernels"), seconds("read") + seconds("store")];
    (
        took,
        answer["result_path"].as_str().unwrap().to_owned(),
        split,
    )
}

/// The answer of a result file, read back in Python: the cluster labels, or Moran's I.
fn answer_of(path: &str, workload: &str) -> Value {
    let script = r#"
import json, sys
import geopandas as gpd
frame = gpd.read_file(sys.argv[1])
if sys.argv[2] == "moran":
    print(json.dumps(float(frame["moran_global_i"].dropna().iloc[0])))
else:
    print(json.dumps(frame["cluster"].astype("int64").tolist()))
"#;
    let out = Command::new(python())
        .args(["-c", script, path, workload])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn same_answers(workload: &str, ours: &Value, theirs: &Value) -> bool {
    match workload {
        "moran" => {
            let (a, b) = (ours.as_f64().unwrap(), theirs.as_f64().unwrap());
            (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
        }
        _ => ours == theirs,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let scale = setting("GEOMILL_BENCH_SCALE", 1.0);
    let runs = setting("GEOMILL_BENCH_RUNS", 3.0) as usize;
    let points = (1_000_000.0 * scale) as u32;
    let dir = tempfile::tempdir().unwrap();
    let script = std::env::current_dir()
        .unwrap()
        .join("benches/real_layers.py");
    let made = Command::new(python())
        .arg(&script)
        .arg(dir.path())
        .args(["--points", &points.to_string()])
        .status()
        .unwrap();
    assert!(made.success(), "real_layers.py failed");
    let (regions_path, points_path) = (
        dir.path().join("tiles.gpkg"),
        dir.path().join("points.parquet"),
    );
    let init = json!([
        [-100.0, 40.0],
        [-60.0, -15.0],
        [10.0, 50.0],
        [20.0, 0.0],
        [80.0, 25.0],
        [130.0, -20.0],
        [30.0, 60.0],
        [100.0, 50.0]
    ]);
    let peer = Command::new(python())
        .args(["-c", PEER])
        .args([
            &regions_path.display().to_string(),
            &points_path.display().to_string(),
            &runs.to_string(),
            &init.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        peer.status.success(),
        "{}",
        String::from_utf8_lossy(&peer.stderr)
    );
    let peer: Vec<Value> = String::from_utf8_lossy(&peer.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    runtime.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let state = AppState::open(Config::with_data_dir(data.path().join("data"))).unwrap();
        let regions = upload(&state, &regions_path).await["id"].as_str().unwrap().to_owned();
        let points_id = upload(&state, &points_path).await["id"].as_str().unwrap().to_owned();
        let workloads = [
            (
                "moran",
                "morans_i queen, ~3,000 polygons (PySAL)",
                &regions,
                json!([{"id": "m", "capability": "morans_i", "params": {"field": "value"}}]),
            ),
            (
                "kmeans",
                "cluster_kmeans k=8, 1M points (scikit-learn)",
                &points_id,
                json!([{"id": "k", "capability": "cluster_kmeans", "params": {"k": 8, "init": init}}]),
            ),
            (
                "dbscan",
                "cluster_dbscan 5 km, 1M points (scikit-learn)",
                &points_id,
                json!([{"id": "d", "capability": "cluster_dbscan",
                    "params": {"eps": 5000, "min_samples": 10}}]),
            ),
        ];
        println!("{:<48} {:>20} {:>20}", "workload", "geomill", "peer");
        for (workload, label, dataset, steps) in workloads {
            let mut samples = Vec::new();
            let mut path = String::new();
            let mut splits = Vec::new();
            for _ in 0..runs {
                let (took, result, split) = execute(&state, dataset, &steps).await;
                samples.push(Timing::Took(took));
                splits.push(split);
                path = result;
            }
            let ours = median(samples, Duration::MAX);
            let theirs = peer.iter().find(|p| p["workload"] == workload).unwrap();
            let peer_time = Timing::Took(Duration::from_secs_f64(theirs["seconds"].as_f64().unwrap()));
            let agree = same_answers(workload, &answer_of(Path::new(&path).to_str().unwrap(), workload), &theirs["answer"]);
            print_row(label, 48, 20, &[("geomill", &ours), ("peer", &peer_time)]);
            splits.sort_by(|a, b| a[0].total_cmp(&b[0]));
            let [kernels, moving] = splits[splits.len() / 2];
            println!("    geomill's kernels {kernels:.3} s, moving the layer in and out {moving:.3} s");
            let input = if workload == "moran" { &regions_path } else { &points_path };
            let process = peer_process(workload, input, &init, runs);
            let request = match ours {
                Timing::Took(took) => took.as_secs_f64(),
                _ => f64::NAN,
            };
            println!(
                "    the peer as a whole process (file in, GeoPackage out) {:.3} s: the request is {:.2}x faster",
                process.as_secs_f64(),
                process.as_secs_f64() / request
            );
            if !agree {
                println!("    the answers differ: the timing does not count");
            }
        }
    });
}
