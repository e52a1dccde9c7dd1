//! Spatial weights, Moran's I and Getis-Ord G against PySAL (`libpysal`, `esda`): the Natural
//! Earth countries and cities (Shapefiles) and the NYC boroughs (a zip) uploaded, the
//! statistics run through `/api/pipelines/execute` on every engine mode, and each feature's
//! values compared with PySAL's on the result file's own geometries.

use serde_json::{Value, json};

use crate::common;
use common::pipeline::{ENGINES, step};
use common::real::run_python;
use common::references::{COMPARE_STATISTICS, statistics_case};
use common::uploads::{run, shared_datasets, shared_paths};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weights_and_autocorrelation_equal_pysal_on_every_engine() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("statistics").await;
    let feet_in_20_miles = 20.0 * 5280.0;
    // Every engine mode runs the statistics natively, with PySAL's answers.
    let plans = [
        (
            "embedded",
            &countries,
            step("morans_i", json!({"field": "pop_est"})),
            0.0,
        ),
        (
            "postgis",
            &countries,
            step(
                "morans_i",
                json!({"field": "gdp_md_est", "method": "rook", "output": "m"}),
            ),
            0.0,
        ),
        (
            "native",
            &countries,
            step(
                "getis_ord_g",
                json!({"field": "pop_est", "method": "knn", "k": 5}),
            ),
            0.0,
        ),
        (
            "hybrid",
            &countries,
            step("getis_ord_g", json!({"field": "gdp_md_est", "star": false})),
            0.0,
        ),
        (
            "postgis",
            &countries,
            step("spatial_weights", json!({"method": "queen"})),
            0.0,
        ),
        (
            "embedded",
            &cities,
            step(
                "spatial_weights",
                json!({"method": "distance_band", "distance": 1500, "unit": "kilometers"}),
            ),
            1_500_000.0,
        ),
        (
            "hybrid",
            &cities,
            step(
                "spatial_weights",
                json!({"method": "knn", "k": 4, "as": "table", "transform": "row"}),
            ),
            0.0,
        ),
        (
            "native",
            &cities,
            step(
                "spatial_weights",
                json!({"method": "inverse_distance", "distance": 2000, "unit": "kilometers",
                    "power": 2, "as": "table"}),
            ),
            2_000_000.0,
        ),
        (
            "embedded",
            &boroughs,
            step(
                "getis_ord_g",
                json!({"field": "Shape_Leng", "method": "distance_band", "distance": 20,
                    "unit": "miles"}),
            ),
            feet_in_20_miles,
        ),
        (
            "postgis",
            &boroughs,
            step(
                "spatial_weights",
                json!({"method": "inverse_distance", "distance": 20, "unit": "miles",
                    "as": "table", "id_field": "BoroName"}),
            ),
            feet_in_20_miles,
        ),
    ];
    let mut manifest = Vec::new();
    for (engine, dataset, steps, threshold) in plans {
        let path = run(&state, dataset, engine, steps.clone()).await;
        let geographic = *dataset != boroughs;
        let mut entry = statistics_case(
            &format!("{engine} {steps}"),
            path,
            &steps,
            geographic,
            threshold,
        );
        let [_, cities_path, boroughs_path] = shared_paths();
        entry["source"] = json!(if *dataset == cities {
            cities_path
        } else {
            boroughs_path
        });
        manifest.push(entry);
    }
    let file = dir.path().join("statistics.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let problems = run_python(COMPARE_STATISTICS, &[&file.display().to_string()]);
    assert_eq!(
        problems.trim(),
        format!("compared {} cases", manifest.len())
    );
}

/// Reads each run's result file and prints the runs whose rows differ from the first run's of
/// the same capability (attributes equal, NaN equal to NaN; geometries equal as WKB).
const SAME_ON_EVERY_ENGINE: &str = r##"
import json, sys
import geopandas as gpd, numpy as np, pandas as pd
problems = []
runs = json.load(open(sys.argv[1]))
for capability, by_engine in runs.items():
    frames = {engine: gpd.read_file(path) for engine, path in by_engine.items()}
    first_engine, first = next(iter(frames.items()))
    for engine, frame in frames.items():
        if list(frame.columns) != list(first.columns) or len(frame) != len(first):
            problems.append(f"{capability}: {engine} has other columns or rows than {first_engine}")
            continue
        for column in frame.columns:
            a, b = frame[column], first[column]
            if column == "geometry":
                same = [x == y if x is None or y is None else x.wkb == y.wkb for x, y in zip(a, b)]
            elif pd.api.types.is_float_dtype(a):
                same = np.isclose(a.to_numpy(float), b.to_numpy(float), rtol=1e-12, equal_nan=True)
            else:
                same = (a.astype(str) == b.astype(str)).to_numpy()
            if not np.all(same):
                problems.append(f"{capability}: {engine} differs from {first_engine} in {column}")
print("\n".join(problems) or f"compared {len(runs)} capabilities")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_statistics_capability_gives_the_same_answer_on_every_engine() {
    let (dir, state, [countries, cities, _]) = shared_datasets("statistics").await;
    let plans = [
        (
            &countries,
            "spatial_weights",
            json!({"method": "rook", "as": "table"}),
        ),
        (
            &countries,
            "morans_i",
            json!({"field": "pop_est", "permutations": 99}),
        ),
        (
            &countries,
            "getis_ord_g",
            json!({"field": "gdp_md_est", "method": "knn", "k": 6}),
        ),
        (
            &cities,
            "kde_heatmap",
            json!({"bandwidth": 800, "unit": "kilometers"}),
        ),
        (&cities, "cluster_kmeans", json!({"k": 5, "seed": 3})),
        (
            &cities,
            "cluster_dbscan",
            json!({"eps": 700, "unit": "kilometers", "min_samples": 3}),
        ),
        (&cities, "cluster_hdbscan", json!({"min_cluster_size": 6})),
        (
            &countries,
            "grid_create",
            json!({"size": 1000, "unit": "kilometers", "touching": true}),
        ),
        (
            &countries,
            "hexgrid_create",
            json!({"size": 8, "unit": "degrees"}),
        ),
    ];
    let mut runs = serde_json::Map::new();
    for (dataset, capability, params) in plans {
        let mut by_engine = serde_json::Map::new();
        for engine in ENGINES {
            let path = run(&state, dataset, engine, step(capability, params.clone())).await;
            by_engine.insert(engine.to_owned(), json!(path));
        }
        runs.insert(capability.to_owned(), Value::Object(by_engine));
    }
    let file = dir.path().join("engines.json");
    std::fs::write(&file, serde_json::to_vec(&runs).unwrap()).unwrap();
    let answer = run_python(SAME_ON_EVERY_ENGINE, &[&file.display().to_string()]);
    assert_eq!(
        answer.trim(),
        format!("compared {} capabilities", runs.len())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_statistics_requests_are_clear_errors() {
    let (_dir, state, [countries, cities, _]) = shared_datasets("statistics").await;
    let cases = [
        // Refused when planned, with the parameter's path.
        (
            &countries,
            "spatial_weights",
            json!({"method": "distance_band"}),
            "distance",
        ),
        (
            &countries,
            "morans_i",
            json!({"field": "no_such_field"}),
            "no_such_field",
        ),
        (
            &cities,
            "kde_heatmap",
            json!({"bandwidth": -1}),
            "bandwidth",
        ),
        (
            &countries,
            "grid_create",
            json!({"size": 0.001, "unit": "degrees", "bbox": [-180, -90, 180, 90]}),
            "cells",
        ),
        (
            &countries,
            "cluster_hdbscan",
            json!({"min_cluster_size": 1}),
            "min_cluster_size",
        ),
        // Refused when run, naming the problem.
        (&cities, "morans_i", json!({"field": "name"}), "not numbers"),
        (
            &cities,
            "spatial_weights",
            json!({"method": "queen"}),
            "need polygons",
        ),
        (
            &countries,
            "grid_create",
            json!({"size": 1, "unit": "meters"}),
            "cells",
        ),
    ];
    for (dataset, capability, params, named) in cases {
        let request = json!({"dataset_id": dataset, "pipeline": {"name": "bad",
            "steps": step(capability, params.clone())}});
        let (status, body) = common::call(
            &state,
            common::post_json("/api/pipelines/execute", &request),
        )
        .await;
        assert_eq!(
            status,
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "{capability} {params}: {body}"
        );
        assert!(
            body.to_string().contains(named),
            "{capability} {params}: the error should name {named}: {body}"
        );
    }
}
