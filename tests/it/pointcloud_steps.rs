//! Point-cloud steps through the API on every engine: laspy's `autzen_trim.laz` (110,000 real
//! points of classes 1 and 2) uploaded, then `pointcloud_filter_classification` keeping and
//! dropping ground, in the native form and in GISPulse's, compared with numpy's selection of
//! laspy's arrays (the same points: coordinates, class and GPS time).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::real::run_python;
use crate::common::uploads::upload;
use crate::common::{call, post_json};

/// Compares a result file with laspy's points whose class is (`keep`) or is not (`drop`) in
/// the codes given: the same points, taken as sets of (gps_time, x, y, z, class) rows (SQL
/// engines define no row order).
const COMPARE: &str = r#"
import sys, json
import numpy as np, laspy, geopandas
las = laspy.read(sys.argv[1])
result = geopandas.read_file(sys.argv[2]) if not sys.argv[2].endswith(".parquet") \
    else geopandas.read_parquet(sys.argv[2])
mode, codes = sys.argv[3], [int(c) for c in sys.argv[4].split(",") if c]
chosen = np.isin(np.asarray(las.classification), codes)
if mode == "drop":
    chosen = ~chosen
def rows(gps, x, y, z, cls):
    table = np.column_stack([gps, x, y, z, cls]).astype("float64")
    return table[np.lexsort(table.T[::-1])]
expected = rows(np.asarray(las.gps_time)[chosen], np.asarray(las.x)[chosen],
                np.asarray(las.y)[chosen], np.asarray(las.z)[chosen],
                np.asarray(las.classification)[chosen])
got = rows(result["gps_time"], result["x"], result["y"], result["z"], result["classification"])
print(json.dumps({"expected": int(chosen.sum()), "got": len(result),
                  "same": bool(expected.shape == got.shape and np.array_equal(expected, got))}))
"#;

fn autzen() -> std::path::PathBuf {
    let deps = std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    std::path::PathBuf::from(deps).join("laspy-2.7.0-data/autzen_trim.laz")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_filters_keep_numpys_points_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(crate::common::postgis::fresh_database("pointcloud_steps").await);
    let state = geomill::state::AppState::open(config).unwrap();
    let cloud = upload(
        &state,
        &[("autzen_trim.laz", std::fs::read(autzen()).unwrap())],
    )
    .await;
    for engine in ["embedded", "postgis", "native", "hybrid"] {
        for (mode, codes, pipeline) in [
            (
                "keep",
                "2",
                json!({"name": "ground", "steps": [{"id": "g",
                "capability": "pointcloud_filter_classification", "input": "autzen_trim",
                "params": {"keep": [2]}}]}),
            ),
            (
                "drop",
                "2",
                json!({"version": 2, "steps": [{"id": "g",
                "capability": "pointcloud_filter_classification",
                "params": {"drop": [2], "keep": null}}]}),
            ),
            (
                "keep",
                "",
                json!({"name": "nothing", "steps": [{"id": "g",
                "capability": "pointcloud_filter_classification", "input": "autzen_trim",
                "params": {"keep": []}}]}),
            ),
        ] {
            let request = json!({"dataset_id": cloud, "engine": engine, "pipeline": pipeline});
            let (status, run) = call(&state, post_json("/api/pipelines/execute", &request)).await;
            assert_eq!(status, StatusCode::OK, "{engine} {mode} {codes}: {run}");
            let answer: Value = serde_json::from_str(&run_python(
                COMPARE,
                &[
                    autzen().to_str().unwrap(),
                    run["result_path"].as_str().unwrap(),
                    mode,
                    codes,
                ],
            ))
            .unwrap();
            assert_eq!(answer["same"], true, "{engine} {mode} {codes}: {answer}");
        }
    }

    // Both lists, or neither, is a 422 naming the parameter; nothing runs.
    for params in [json!({"keep": [2], "drop": [1]}), json!({})] {
        let pipeline = json!({"name": "bad", "steps": [{"id": "g",
            "capability": "pointcloud_filter_classification", "input": "autzen_trim",
            "params": params}]});
        let request = json!({"dataset_id": cloud, "engine": "embedded", "pipeline": pipeline});
        let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{params}: {body}");
        assert!(body.to_string().contains("keep"), "{params}: {body}");
    }
}
