//! `grid_create`, `hexgrid_create` and `kde_heatmap` on uploaded files: grids equal PostGIS's
//! `ST_SquareGrid` / `ST_HexagonGrid` cell for cell (with `touching`, Shapely's intersects
//! picks the cells), grids in metres on lon/lat have cells of the asked area, and densities
//! equal scikit-learn's `KernelDensity` (gaussian, epanechnikov) and the quartic formula.

use serde_json::json;

use crate::common;
use common::pipeline::step;
use common::real::run_python;
use common::references::{COMPARE_DENSITY, COMPARE_GRIDS};
use common::uploads::{run, shared_datasets, shared_paths};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grids_equal_postgis_and_densities_equal_scikit_learn() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("grids").await;
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let grids = [
        (
            "embedded",
            &countries,
            step("grid_create", json!({"size": 10.0, "unit": "degrees"})),
        ),
        (
            "postgis",
            &countries,
            step(
                "hexgrid_create",
                json!({"size": 7.0, "unit": "degrees", "touching": true}),
            ),
        ),
        (
            "native",
            &boroughs,
            step(
                "grid_create",
                json!({"size": 5000.0, "unit": "crs", "bbox": [980000.5, 170000.25, 1030000.0, 240000.0]}),
            ),
        ),
        (
            "hybrid",
            &boroughs,
            step(
                "hexgrid_create",
                json!({"size": 3000.0, "unit": "crs", "touching": true}),
            ),
        ),
        (
            "embedded",
            &boroughs,
            step(
                "grid_create",
                json!({"size": 2000.0, "unit": "crs", "touching": true}),
            ),
        ),
    ];
    let mut manifest = Vec::new();
    for (engine, dataset, steps) in grids {
        let path = run(&state, dataset, engine, steps.clone()).await;
        let source = if *dataset == countries {
            countries_path.clone()
        } else {
            boroughs_path.clone()
        };
        manifest.push(json!({"label": format!("{engine} {steps}"), "path": path,
            "capability": steps[0]["capability"], "params": steps[0]["params"],
            "source": source}));
    }
    // A grid in metres on lon/lat: cells of 50 km × 50 km over Germany.
    let france = json!([
        {"id": "f", "capability": "filter", "params": {"where": "name = 'Germany'"}},
        {"id": "g", "capability": "grid_create", "params": {"size": 50, "unit": "kilometers", "touching": true}}
    ]);
    let path = run(&state, &countries, "embedded", france).await;
    manifest.push(json!({"label": "50 km grid over Germany", "path": path,
        "capability": "grid_create", "params": {}, "area": 2.5e9,
        "source": countries_path, "where": "name == 'Germany'"}));
    let file = dir.path().join("grids.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let dsn = state.config().postgis_dsn.clone().unwrap();
    let problems = run_python(COMPARE_GRIDS, &[&file.display().to_string(), &dsn]);
    assert_eq!(
        problems.trim(),
        format!("compared {} cases", manifest.len())
    );

    let mut manifest = Vec::new();
    for (engine, kernel) in [
        ("embedded", "quartic"),
        ("postgis", "gaussian"),
        ("native", "epanechnikov"),
    ] {
        let params = json!({"bandwidth": 12.0, "cell_size": 5.0, "unit": "degrees",
            "kernel": kernel});
        let path = run(&state, &cities, engine, step("kde_heatmap", params.clone())).await;
        manifest.push(json!({"label": format!("{engine} {kernel}"), "path": path,
            "params": params, "source": cities_path}));
    }
    let file = dir.path().join("density.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let problems = run_python(COMPARE_DENSITY, &[&file.display().to_string()]);
    assert_eq!(
        problems.trim(),
        format!("compared {} cases", manifest.len())
    );
}
