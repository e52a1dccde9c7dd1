//! `cluster_kmeans`, `cluster_dbscan` and `cluster_hdbscan` against scikit-learn: the Natural
//! Earth cities uploaded as a Shapefile, clustered through `/api/pipelines/execute` on every
//! engine mode, and each city's cluster compared with scikit-learn's on the same coordinates
//! (great-circle distances for DBSCAN in metres and for HDBSCAN on lon/lat: scikit-learn's
//! `haversine` metric).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common;
use common::post_json as post;
use common::real::run_python;
use common::{call, multipart, shared};

/// Compares each result (`[{path, kind, ...}]`) with scikit-learn; prints one line per
/// difference.
pub const COMPARE: &str = r#"
import json, sys, warnings
import geopandas as gpd, numpy as np
from sklearn.cluster import DBSCAN, HDBSCAN, KMeans
warnings.filterwarnings("ignore")
R = 6371008.8
problems = []

# scikit-learn's HDBSCAN breaks ties between equal reachabilities by NumPy's argsort and takes
# core distances through NumPy's arcsin: both are AVX-512 code where the CPU has it, which
# geomill reproduces. Elsewhere NumPy runs other code, scikit-learn's own labels move at ties,
# and only a few tie-decided points (noise on one side) may differ.
AVX512 = "avx512f" in open("/proc/cpuinfo").read()

def nearly_same(ours, theirs):
    pairs = {}
    for a, b in zip(ours.tolist(), theirs.tolist()):
        pairs.setdefault(a, []).append(b)
    mapped = {a: max(set(bs), key=bs.count) for a, bs in pairs.items()}
    off = [(a, b) for a, b in zip(ours.tolist(), theirs.tolist()) if mapped[a] != b]
    return len(off) <= 0.01 * len(ours) and all(a == -1 or b == -1 for a, b in off)

def same_up_to_renumbering(ours, theirs):
    pairs = set(zip(ours.tolist(), theirs.tolist()))
    return (len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
            and all((a == -1) == (b == -1) for a, b in pairs))

cases = json.load(open(sys.argv[1]))
for case in cases:
    frame = gpd.read_file(case["path"])
    xy = np.column_stack([frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()])
    ours = frame["cluster"].to_numpy()
    label = f'{case["engine"]} {case["kind"]}'
    if case["kind"] == "kmeans":
        init = np.array(case["init"], dtype="float64")
        theirs = KMeans(n_clusters=len(init), init=init, n_init=1, algorithm="lloyd",
                        max_iter=300, tol=0).fit(xy).labels_
    elif case["kind"] == "hdbscan":
        planar = case.get("metric") == "euclidean"
        theirs = HDBSCAN(min_cluster_size=case["min_cluster_size"],
                         min_samples=case.get("min_samples"),
                         metric="euclidean" if planar else "haversine"
                         ).fit(xy if planar else np.radians(xy[:, ::-1])).labels_
        if not same_up_to_renumbering(ours, theirs) and (AVX512 or not nearly_same(ours, theirs)):
            problems.append(f"{label} {case}: clusters differ from scikit-learn's: ours "
                            f"{np.bincount(ours + 1).tolist()}, theirs {np.bincount(theirs + 1).tolist()}")
        continue
    elif case.get("unit") == "meters":
        radians = np.radians(xy[:, ::-1])
        theirs = DBSCAN(eps=case["eps"] / R, min_samples=case["min_samples"],
                        metric="haversine").fit(radians).labels_
    else:
        dx = xy[:, 0][:, None] - xy[:, 0][None, :]
        dy = xy[:, 1][:, None] - xy[:, 1][None, :]
        distances = np.sqrt(dx * dx + dy * dy)
        theirs = DBSCAN(eps=case["eps"], min_samples=case["min_samples"],
                        metric="precomputed").fit(distances).labels_
    if not np.array_equal(ours, theirs):
        bad = int(np.sum(ours != theirs))
        problems.append(f"{label}: {bad} of {len(ours)} features in another cluster")
print("\n".join(problems) or f"compared {len(cases)} cases")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_equal_scikit_learn() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(common::postgis::fresh_database("clusters").await);
    let state = geomill::state::AppState::open(config).unwrap();
    let files: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj", "cpg"]
        .iter()
        .filter_map(|ext| {
            let name = format!("naturalearth_cities.{ext}");
            let bytes = std::fs::read(shared(&format!("naturalearth_cities/{name}"))).ok()?;
            Some((name, bytes))
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let (status, dataset) = call(&state, multipart("/datasets/upload", &files, None)).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    let id = dataset["id"].as_str().unwrap();
    let init = json!([
        [-100.0, 40.0],
        [-60.0, -15.0],
        [10.0, 50.0],
        [20.0, 0.0],
        [80.0, 25.0],
        [130.0, -20.0]
    ]);
    let mut manifest: Vec<Value> = Vec::new();
    for engine in ["embedded", "postgis", "native", "hybrid"] {
        for (kind, params) in [
            ("kmeans", json!({"k": 6, "init": init})),
            (
                "dbscan",
                json!({"eps": 6.0, "unit": "degrees", "min_samples": 3}),
            ),
            (
                "dbscan",
                json!({"eps": 600_000, "unit": "meters", "min_samples": 4}),
            ),
            ("hdbscan", json!({"min_cluster_size": 5})),
            ("hdbscan", json!({"min_cluster_size": 8, "min_samples": 3})),
        ] {
            let capability = format!("cluster_{kind}");
            let request = json!({"dataset_id": id, "engine": engine, "pipeline": {"name": "c",
                "steps": [{"id": "c", "capability": capability, "params": params}]}});
            let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
            assert_eq!(status, StatusCode::OK, "{engine} {kind}: {run}");
            let mut case = params.clone();
            case["kind"] = json!(kind);
            case["engine"] = json!(engine);
            case["path"] = run["result_path"].clone();
            manifest.push(case);
        }
    }
    let file = dir.path().join("clusters.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let problems = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(
        problems.trim(),
        format!("compared {} cases", manifest.len())
    );
}
