//! `cluster_kmeans`, `cluster_dbscan` and `cluster_hdbscan` against scikit-learn: the Natural
//! Earth cities uploaded as a Shapefile, clustered through `/api/pipelines/execute` on every
//! engine mode, and each city's cluster compared with scikit-learn's on the same coordinates
//! (great-circle distances for DBSCAN in metres and for HDBSCAN on lon/lat: scikit-learn's
//! `haversine` metric). `method: scikit_learn` is compared with `KMeans(random_state=seed,
//! n_init="auto")` itself, labels and distances, on the cities and on the 10,000-odd vertices
//! of the countries (uploaded as a Shapefile too: Lloyd's steps over many chunks).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common;
use common::call;
use common::pipeline::ENGINES;
use common::post_json as post;
use common::real::run_python;
use common::references::COMPARE_CLUSTERS;
use common::uploads::upload_shapefile;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_equal_scikit_learn() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(common::postgis::fresh_database("clusters").await);
    let state = geomill::state::AppState::open(config).unwrap();
    let id = upload_shapefile(&state, "naturalearth_cities").await;
    let countries = upload_shapefile(&state, "naturalearth_lowres").await;
    let init = json!([
        [-100.0, 40.0],
        [-60.0, -15.0],
        [10.0, 50.0],
        [20.0, 0.0],
        [80.0, 25.0],
        [130.0, -20.0]
    ]);
    let mut manifest: Vec<Value> = Vec::new();
    for engine in ENGINES {
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
            (
                "kmeans",
                json!({"k": 8, "method": "scikit_learn", "seed": 3, "distance": "dist"}),
            ),
            (
                "kmeans",
                json!({"k": 12, "method": "scikit_learn", "seed": 42, "distance": "dist",
                    "vertices": true}),
            ),
        ] {
            let capability = format!("cluster_{kind}");
            let mut steps = vec![json!({"id": "c", "capability": capability, "params": params})];
            let mut dataset = &id;
            if params["vertices"] == json!(true) {
                dataset = &countries;
                steps.insert(
                    0,
                    json!({"id": "v", "capability": "extract_vertices", "params": {}}),
                );
                steps[1]["params"]
                    .as_object_mut()
                    .unwrap()
                    .remove("vertices");
            }
            let request = json!({"dataset_id": dataset, "engine": engine, "pipeline": {"name": "c",
                "steps": steps}});
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
    let problems = run_python(COMPARE_CLUSTERS, &[&file.display().to_string()]);
    assert_eq!(
        problems.trim(),
        format!("compared {} cases", manifest.len())
    );
}
