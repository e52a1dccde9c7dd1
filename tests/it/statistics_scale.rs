//! The statistics capabilities on generated real-shaped files (`benches/real_layers.py`): about
//! 3,000 regions of noisy coastline (multipolygons, holes, invalid polygons, NULL and empty
//! geometries, NULL values), the same pieces as cut (neighbours sharing borders, for
//! contiguity) and 100,000 clustered points in GeoParquet, uploaded and run
//! through `/api/pipelines/execute`, each answer compared with PySAL, scikit-learn or PostGIS
//! as in the tests on the shared datasets.

use serde_json::{Value, json};

use crate::common;
use crate::common::pipeline::step;
use crate::common::references::{
    COMPARE_CLUSTERS, COMPARE_DENSITY, COMPARE_GRIDS, COMPARE_STATISTICS, statistics_case,
};
use common::real::{real_layers, run_python};
use common::uploads::{run, upload};

/// Runs `script` over `manifest` (written to `dir`); fails on any difference it prints.
fn compare(dir: &std::path::Path, name: &str, script: &str, manifest: &[Value], extra: &[&str]) {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_vec(manifest).unwrap()).unwrap();
    let mut args = vec![file.display().to_string()];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let problems = run_python(script, &args);
    assert_eq!(
        problems.trim(),
        format!("compared {} cases", manifest.len()),
        "{name}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_on_100000_points_and_real_regions_equal_the_references() {
    let dir = tempfile::tempdir().unwrap();
    let (regions_path, points_path) = real_layers(dir.path(), 100_000, 3.5);
    let dsn = common::postgis::fresh_database("statistics_scale").await;
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(dsn.clone());
    let state = geomill::state::AppState::open(config).unwrap();
    let regions = upload(
        &state,
        &[("regions.gpkg", std::fs::read(&regions_path).unwrap())],
    )
    .await;
    let tiles_path = dir.path().join("tiles.gpkg");
    let tiles = upload(
        &state,
        &[("tiles.gpkg", std::fs::read(&tiles_path).unwrap())],
    )
    .await;
    let points = upload(
        &state,
        &[("points.parquet", std::fs::read(&points_path).unwrap())],
    )
    .await;
    let regions_file = regions_path.display().to_string();
    let points_file = points_path.display().to_string();

    let mut statistics = Vec::new();
    for (engine, dataset, steps, threshold, local_only) in [
        (
            "embedded",
            &tiles,
            step("morans_i", json!({"field": "value"})),
            0.0,
            false,
        ),
        (
            "postgis",
            &tiles,
            step(
                "getis_ord_g",
                json!({"field": "value", "method": "rook", "permutations": 99}),
            ),
            0.0,
            false,
        ),
        (
            "native",
            &points,
            step(
                "morans_i",
                json!({"field": "value", "method": "knn", "k": 8, "permutations": 0}),
            ),
            0.0,
            false,
        ),
        (
            "hybrid",
            &points,
            step(
                "getis_ord_g",
                json!({"field": "value", "method": "distance_band", "distance": 30,
                    "unit": "kilometers", "permutations": 0}),
            ),
            30_000.0,
            true,
        ),
        (
            "embedded",
            &points,
            step(
                "spatial_weights",
                json!({"method": "distance_band", "distance": 20, "unit": "kilometers"}),
            ),
            20_000.0,
            false,
        ),
    ] {
        let path = run(&state, dataset, engine, steps.clone()).await;
        let mut entry =
            statistics_case(&format!("{engine} {steps}"), path, &steps, true, threshold);
        entry["local_only"] = json!(local_only);
        statistics.push(entry);
    }
    compare(
        dir.path(),
        "statistics",
        COMPARE_STATISTICS,
        &statistics,
        &[],
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
    let mut clusters = Vec::new();
    for (engine, kind, steps) in [
        (
            "native",
            "kmeans",
            step("cluster_kmeans", json!({"k": 8, "init": init})),
        ),
        (
            "embedded",
            "dbscan",
            step("cluster_dbscan", json!({"eps": 5000, "min_samples": 10})),
        ),
        (
            "postgis",
            "hdbscan",
            json!([
                {"id": "m", "capability": "reproject", "params": {"to": "EPSG:3857"}},
                {"id": "h", "capability": "cluster_hdbscan",
                 "params": {"min_cluster_size": 50, "min_samples": 10}}
            ]),
        ),
    ] {
        let path = run(&state, &points, engine, steps.clone()).await;
        let last = steps.as_array().unwrap().last().unwrap();
        let mut entry = last["params"].clone();
        entry["kind"] = json!(kind);
        entry["engine"] = json!(engine);
        entry["path"] = json!(path);
        entry["unit"] = json!("meters");
        entry["metric"] = json!(if kind == "hdbscan" { "euclidean" } else { "" });
        clusters.push(entry);
    }
    compare(dir.path(), "clusters", COMPARE_CLUSTERS, &clusters, &[]);

    let mut grids = Vec::new();
    for (engine, steps) in [
        (
            "embedded",
            step(
                "hexgrid_create",
                json!({"size": 2.0, "unit": "degrees", "touching": true}),
            ),
        ),
        (
            "postgis",
            step(
                "grid_create",
                json!({"size": 1.5, "unit": "degrees", "touching": true}),
            ),
        ),
    ] {
        let path = run(&state, &regions, engine, steps.clone()).await;
        grids.push(json!({"label": format!("{engine} {steps}"), "path": path,
            "capability": steps[0]["capability"], "params": steps[0]["params"],
            "source": regions_file}));
    }
    let path = run(
        &state,
        &points,
        "native",
        step(
            "hexgrid_create",
            json!({"size": 1.0, "unit": "degrees", "touching": true}),
        ),
    )
    .await;
    grids.push(
        json!({"label": "hexagons touching 100,000 points", "path": path,
        "capability": "hexgrid_create", "params": {"size": 1.0, "touching": true},
        "source": points_file}),
    );
    compare(dir.path(), "grids", COMPARE_GRIDS, &grids, &[&dsn]);

    let params = json!({"bandwidth": 1.0, "cell_size": 0.5, "unit": "degrees",
        "kernel": "quartic", "weight": "value"});
    let path = run(
        &state,
        &points,
        "hybrid",
        step("kde_heatmap", params.clone()),
    )
    .await;
    let density = [
        json!({"label": "weighted quartic heatmap of 100,000 points",
        "path": path, "params": params, "source": points_file}),
    ];
    compare(dir.path(), "density", COMPARE_DENSITY, &density, &[]);
}
