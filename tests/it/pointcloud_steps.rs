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

const REFERENCE: &str = include_str!("pointcloud_reference.py");

/// Footprints drawn over autzen's extent in its CRS, written as a GeoPackage: a block, a
/// polygon with a hole, a multipolygon, one overlapping the block, a triangle and one away
/// from every point; each with a `name` and a `ground` elevation.
const FOOTPRINTS: &str = r#"
import sys
import laspy, geopandas as gpd, shapely
las = laspy.read(sys.argv[1])
(x0, y0, _), (x1, y1, _) = las.header.mins, las.header.maxs
at = lambda fx, fy: (x0 + fx * (x1 - x0), y0 + fy * (y1 - y0))
def box(a, b, c, d):
    return shapely.box(*at(a, b), *at(c, d))
shapes = {
    "block": box(0.30, 0.30, 0.45, 0.50),
    "holed": box(0.55, 0.20, 0.80, 0.45).difference(box(0.62, 0.27, 0.72, 0.37)),
    "multi": shapely.MultiPolygon([box(0.05, 0.60, 0.15, 0.70), box(0.20, 0.75, 0.28, 0.90)]),
    "overlap": box(0.40, 0.40, 0.52, 0.58),
    "triangle": shapely.Polygon([at(0.60, 0.60), at(0.90, 0.62), at(0.75, 0.95)]),
    "away": box(3.0, 3.0, 3.1, 3.1),
}
frame = gpd.GeoDataFrame({"name": list(shapes), "ground": [400.0 + i for i in range(len(shapes))]},
                         geometry=list(shapes.values()), crs=las.header.parse_crs())
frame.to_file(sys.argv[2], driver="GPKG")
"#;

/// Runs `pipeline` on `dataset` with `engine` through the API; answers the result file.
async fn result_of(
    state: &geomill::state::AppState,
    dataset: &str,
    engine: &str,
    pipeline: Value,
) -> String {
    let request = json!({"dataset_id": dataset, "engine": engine, "pipeline": pipeline});
    let (status, run) = call(state, post_json("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::OK, "{engine}: {run}");
    run["result_path"].as_str().unwrap().to_owned()
}

/// Runs a pipeline on `engine` and compares its result with `reference` (`numpy` or
/// `gispulse`) of `step` (see `pointcloud_reference.py`).
async fn compare_run(
    state: &geomill::state::AppState,
    dataset: &str,
    engine: &str,
    pipeline: Value,
    (kind, reference, step): (&str, &str, &Value),
) {
    let result = result_of(state, dataset, engine, pipeline).await;
    let printed = run_python(REFERENCE, &[kind, reference, &result, &step.to_string()]);
    let answer: Value = serde_json::from_str(printed.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{engine} {kind} {reference}: {e}: {printed}"));
    assert_eq!(
        answer["differences"],
        json!([]),
        "{engine} {kind} against {reference}: {answer}"
    );
    assert!(answer["got"].as_u64().unwrap() > 0, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grid_summaries_and_zonal_heights_equal_numpy_and_gispulse_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(crate::common::postgis::fresh_database("pointcloud_grid").await);
    let state = geomill::state::AppState::open(config).unwrap();
    let las = autzen().display().to_string();
    let cloud = upload(
        &state,
        &[("autzen_trim.laz", std::fs::read(autzen()).unwrap())],
    )
    .await;
    let footprints_file = dir.path().join("footprints.gpkg");
    run_python(FOOTPRINTS, &[&las, footprints_file.to_str().unwrap()]);
    let footprints = upload(
        &state,
        &[("footprints.gpkg", std::fs::read(&footprints_file).unwrap())],
    )
    .await;
    let every = [
        "min", "max", "mean", "median", "std", "count", "p90", "p95", "p99",
    ];
    let grid = json!({"las": las, "classes": [2], "cell_size": 10.0, "stats": every});
    let zonal = json!({"las": las, "classes": [1], "stats": every,
        "polygons": footprints_file, "ground_col": "ground"});
    let zonal_all = json!({"las": las, "classes": [], "stats": ["max", "min", "mean", "count"],
        "polygons": footprints_file});
    for engine in ["embedded", "postgis", "native", "hybrid"] {
        // Ground, then a 10 ft grid of every statistic.
        let pipeline = json!({"name": "grid", "steps": [
            {"id": "ground", "capability": "pointcloud_filter_classification",
             "input": "autzen_trim", "params": {"keep": [2]}},
            {"id": "cells", "capability": "pointcloud_grid_summary", "input": "ground",
             "params": {"cell_size": 10.0, "stats": every}}]});
        compare_run(&state, &cloud, engine, pipeline, ("grid", "numpy", &grid)).await;
        let gispulse = json!({"version": 2, "steps": [
            {"id": "ground", "capability": "pointcloud_filter_classification",
             "params": {"keep": [2]}},
            {"id": "cells", "capability": "pointcloud_grid_summary",
             "params": {"cell_size": 10.0, "stats": every, "drop_empty": false}}]});
        compare_run(
            &state,
            &cloud,
            engine,
            gispulse,
            ("grid", "gispulse", &grid),
        )
        .await;

        // Every statistic of the unclassified points (class 1) per footprint, the height
        // above each footprint's ground.
        let pipeline = json!({"name": "heights", "steps": [
            {"id": "above", "capability": "pointcloud_filter_classification",
             "input": cloud, "params": {"keep": [1]}},
            {"id": "z", "capability": "pointcloud_zonal_height", "input": "footprints",
             "params": {"ref_layer": "above", "stats": every, "ground_col": "ground"}}]});
        compare_run(
            &state,
            &footprints,
            engine,
            pipeline,
            ("zonal", "numpy", &zonal),
        )
        .await;
        // GISPulse's defaults over every point; its NaN count where no point falls.
        let gispulse = json!({"version": 2, "steps": [
            {"id": "z", "capability": "pointcloud_zonal_height",
             "params": {"ref_layer": cloud, "stats": null, "ground_col": null}}]});
        compare_run(
            &state,
            &footprints,
            engine,
            gispulse,
            ("zonal", "gispulse", &zonal_all),
        )
        .await;
    }
}

/// Compares a `pointcloud_load_las` result with laspy's points of the classes given, the first
/// `n` (`numpy`: coordinates and class, and the CRS's EPSG code), or with GISPulse's own
/// `pointcloud_load_las` of the file (`gispulse`: the same columns in the same order, every
/// value equal); rows compared as sets (SQL engines define no row order).
const LOADED: &str = r#"
import sys, json, contextlib
import numpy as np, laspy, geopandas as gpd, shapely
path, result, mode = sys.argv[1], sys.argv[2], sys.argv[3]
classes, n = [int(c) for c in sys.argv[4].split(",") if c], int(sys.argv[5])
got = gpd.read_parquet(result) if result.endswith(".parquet") else gpd.read_file(result)
xyz = shapely.get_coordinates(got.geometry.values, include_z=True)
def rows(table):
    table = np.asarray(table, dtype="float64")
    return table[np.lexsort(table.T[::-1])]
if mode == "numpy":
    las = laspy.read(path)
    chosen = np.flatnonzero(np.isin(np.asarray(las.classification), classes))[:n]
    expected = rows(np.column_stack([np.asarray(las.x)[chosen], np.asarray(las.y)[chosen],
                                     np.asarray(las.z)[chosen],
                                     np.asarray(las.classification)[chosen]]))
    mine = rows(np.column_stack([xyz, got["classification"]]))
    same = expected.shape == mine.shape and np.array_equal(expected, mine)
    print(json.dumps({"same": bool(same), "rows": len(got), "epsg": got.crs.to_epsg()}))
else:
    with contextlib.redirect_stdout(sys.stderr):
        from gispulse.capabilities.pointcloud import PointcloudLoadLasCapability
        theirs = PointcloudLoadLasCapability().execute(
            gpd.GeoDataFrame(), path=path, classifications=classes, max_points=n)
    columns = [c for c in theirs.columns if c != "geometry"]
    their_xyz = shapely.get_coordinates(theirs.geometry.values, include_z=True)
    expected = rows(np.column_stack([their_xyz] + [theirs[c] for c in columns]))
    mine = rows(np.column_stack([xyz] + [got[c] for c in columns if c in got.columns]))
    same = expected.shape == mine.shape and np.array_equal(expected, mine)
    print(json.dumps({"same": bool(same), "rows": len(got), "expected": len(theirs),
                      "columns": [c for c in got.columns if c != got.geometry.name],
                      "their_columns": columns}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loaded_points_equal_laspys_and_gispulses_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(crate::common::postgis::fresh_database("pointcloud_load").await);
    let state = geomill::state::AppState::open(config).unwrap();
    for (file, classes, n) in [
        ("autzen_trim.laz", "2", 5000),
        ("file_with_both_wkt_and_geotiff_vlrs.las", "5,6", 7000),
    ] {
        let path = autzen().with_file_name(file);
        let cloud = upload(&state, &[(file, std::fs::read(&path).unwrap())]).await;
        let codes: Vec<i64> = classes.split(',').map(|c| c.parse().unwrap()).collect();
        for engine in ["embedded", "postgis", "native", "hybrid"] {
            let pipeline = json!({"name": "load", "steps": [{"id": "l",
                "capability": "pointcloud_load_las", "input": cloud,
                "params": {"classifications": codes, "max_points": n, "crs": "EPSG:2994"}}]});
            let result = result_of(&state, &cloud, engine, pipeline).await;
            let args = [
                path.to_str().unwrap(),
                &result,
                "numpy",
                classes,
                &n.to_string(),
            ];
            let answer: Value = serde_json::from_str(&run_python(LOADED, &args)).unwrap();
            assert_eq!(answer["same"], true, "{file} {engine}: {answer}");
            assert_eq!(answer["epsg"], 2994, "{file} {engine}: {answer}");

            // GISPulse's form: `path` names the dataset uploaded from the file.
            let gispulse = json!({"version": 2, "steps": [{"id": "l",
                "capability": "pointcloud_load_las",
                "params": {"path": file, "classifications": codes, "max_points": n}}]});
            let result = result_of(&state, &cloud, engine, gispulse).await;
            let args = [
                path.to_str().unwrap(),
                &result,
                "gispulse",
                classes,
                &n.to_string(),
            ];
            let answer: Value = serde_json::from_str(&run_python(LOADED, &args)).unwrap();
            assert_eq!(answer["same"], true, "{file} {engine}: {answer}");
            assert_eq!(answer["columns"], answer["their_columns"], "{answer}");
        }
    }
}

/// The seeded cloud generator (`scripts/generate_pointcloud.py`): terrain, buildings and trees.
fn generated_cloud(dir: &std::path::Path, points: u64) -> std::path::PathBuf {
    let out = dir.join("city.laz");
    let script = crate::common::golden::repo().join("scripts/generate_pointcloud.py");
    let output = std::process::Command::new(crate::common::real::python())
        .arg(&script)
        .arg(&out)
        .args(["--bounds", "913175", "120128", "1067383", "272844"])
        .args([
            "--points",
            &points.to_string(),
            "--seed",
            "7",
            "--epsg",
            "2263",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heights_per_borough_of_a_generated_cloud_equal_numpys_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(crate::common::postgis::fresh_database("pointcloud_city").await);
    let state = geomill::state::AppState::open(config).unwrap();
    let laz = generated_cloud(dir.path(), 300_000);
    let cloud = upload(&state, &[("city.laz", std::fs::read(&laz).unwrap())]).await;
    let zip = crate::common::shared("nybb_16a.zip");
    let boroughs = upload(&state, &[("nybb_16a.zip", std::fs::read(&zip).unwrap())]).await;
    let every = [
        "min", "max", "mean", "median", "std", "count", "p90", "p95", "p99",
    ];
    let step = json!({"las": laz, "classes": [6], "stats": every, "key": ["BoroName"],
        "polygons": format!("/vsizip/{}/nybb.shp", zip.display())});
    for engine in ["embedded", "postgis", "native", "hybrid"] {
        // Building points per borough.
        let pipeline = json!({"name": "buildings", "steps": [
            {"id": "roofs", "capability": "pointcloud_filter_classification",
             "input": cloud, "params": {"keep": [6]}},
            {"id": "z", "capability": "pointcloud_zonal_height", "input": "nybb",
             "params": {"ref_layer": "roofs", "stats": every}}]});
        compare_run(
            &state,
            &boroughs,
            engine,
            pipeline,
            ("zonal", "numpy", &step),
        )
        .await;
    }
}

/// `geomill run` of a class filter and a grid summary on a LAZ file, as the benchmark runs it:
/// the file is streamed by the native reader (the filter folded into the grid, never a table),
/// and the cells equal NumPy's from laspy's arrays; with the filter on another column, the
/// points are loaded as a table first and the answer is the same as NumPy's too.
#[test]
fn geomill_run_streams_a_laz_into_its_grid_as_numpy_computes_it() {
    let dir = tempfile::tempdir().unwrap();
    let cloud = generated_cloud(dir.path(), 60_000);
    let cases = [
        (json!({"keep": [2]}), json!([2])),
        (json!({"drop": [5, 6]}), json!([2])),
        (json!({"keep": [0], "col": "user_data"}), json!([])),
    ];
    for (position, (filter, classes)) in cases.into_iter().enumerate() {
        let pipeline = dir.path().join(format!("grid-{position}.json"));
        let document = json!({"name": "grid", "steps": [
            {"id": "ground", "capability": "pointcloud_filter_classification", "params": filter},
            {"id": "cells", "capability": "pointcloud_grid_summary",
             "params": {"cell_size": 250.0, "stats": ["mean", "count", "max"]}}]});
        std::fs::write(&pipeline, document.to_string()).unwrap();
        let written = dir.path().join(format!("cells-{position}.parquet"));
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_geomill"))
            .current_dir(dir.path())
            .args(["run".as_ref(), pipeline.as_os_str(), "--input".as_ref()])
            .arg(&cloud)
            .arg("--output")
            .arg(&written)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{filter}: {said}");
        assert!(said.contains("cells: native"), "{filter}: {said}");
        let step = json!({"las": cloud, "classes": classes, "cell_size": 250.0,
                          "stats": ["mean", "count", "max"]});
        let printed = run_python(
            REFERENCE,
            &[
                "grid",
                "numpy",
                written.to_str().unwrap(),
                &step.to_string(),
            ],
        );
        let answer: Value = serde_json::from_str(printed.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{filter}: {e}: {printed}"));
        assert_eq!(answer["differences"], json!([]), "{filter}: {answer}");
        assert!(answer["got"].as_u64().unwrap() > 0, "{answer}");
    }
}
