//! `grid_create`, `hexgrid_create` and `kde_heatmap` on uploaded files: grids equal PostGIS's
//! `ST_SquareGrid` / `ST_HexagonGrid` cell for cell (with `touching`, Shapely's intersects
//! picks the cells), grids in metres on lon/lat have cells of the asked area, and densities
//! equal scikit-learn's `KernelDensity` (gaussian, epanechnikov) and the quartic formula.

use serde_json::{Value, json};

use crate::common;
use common::real::run_python;
use common::uploads::{run, shared_datasets, shared_paths};

/// Compares each grid case with PostGIS (through `psql`, DSN in argv[2]); prints one line per
/// difference.
pub const COMPARE_GRIDS: &str = r##"
import json, subprocess, sys, warnings
import geopandas as gpd, numpy as np, shapely
from pyproj import Geod
warnings.filterwarnings("ignore")
problems = []
dsn = sys.argv[2]
cases = json.load(open(sys.argv[1]))
for case in cases:
    label, p = case["label"], case["params"]
    ours = gpd.read_file(case["path"])
    source = gpd.read_file(case["source"])
    source = source[source.geometry.notna() & ~source.geometry.is_empty]
    if "where" in case:
        source = source.query(case["where"])
    if case.get("area"):
        geod = Geod(ellps="WGS84")
        areas = np.array([abs(geod.geometry_area_perimeter(g)[0]) for g in ours.geometry])
        worst = np.max(np.abs(areas / case["area"] - 1))
        if worst > 0.01:
            problems.append(f"{label}: a cell's area is off by {worst:.4f}")
        if not shapely.union_all(ours.geometry.values).covers(shapely.union_all(source.geometry.values)):
            problems.append(f"{label}: the cells do not cover the layer")
        continue
    x0, y0, x1, y1 = p.get("bbox") or source.total_bounds.tolist()
    fn = "ST_SquareGrid" if case["capability"] == "grid_create" else "ST_HexagonGrid"
    sql = (f"SELECT i, j, ST_AsText(geom) FROM {fn}({p['size']!r}, "
           f"ST_MakeEnvelope({x0!r}, {y0!r}, {x1!r}, {y1!r}))")
    out = subprocess.run(["psql", dsn, "-qtA", "-F", "|", "-c", sql], capture_output=True,
                         text=True, check=True).stdout
    theirs = {}
    for line in out.splitlines():
        i, j, wkt = line.split("|")
        theirs[(int(i), int(j))] = shapely.from_wkt(wkt)
    if p.get("touching"):
        tree = shapely.STRtree(source.geometry.values)
        theirs = {k: g for k, g in theirs.items() if len(tree.query(g, predicate="intersects"))}
    mine = {(int(i), int(j)): g for i, j, g in zip(ours["i"], ours["j"], ours.geometry)}
    if set(mine) != set(theirs):
        problems.append(f"{label}: cells differ: {len(set(mine) - set(theirs))} more, "
                        f"{len(set(theirs) - set(mine))} fewer than PostGIS's {len(theirs)}")
        continue
    worst = max(shapely.symmetric_difference(mine[k], theirs[k]).area / theirs[k].area
                for k in theirs)
    if worst > 1e-9:
        problems.append(f"{label}: a cell differs from PostGIS's by {worst:.2e} of its area")
    if list(ours["cell_id"]) != list(range(len(ours))):
        problems.append(f"{label}: cell ids are not 0..n")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

/// Compares each density case with scikit-learn (gaussian, epanechnikov) and the quartic
/// kernel's formula at the cells' centres; prints one line per difference.
pub const COMPARE_DENSITY: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np
from sklearn.neighbors import KernelDensity
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))
for case in cases:
    label, p = case["label"], case["params"]
    ours = gpd.read_file(case["path"])
    points = gpd.read_file(case["source"])
    points = points[points.geometry.notna()]
    xy = np.column_stack([points.geometry.x, points.geometry.y])
    weight = (np.nan_to_num(points[p["weight"]].to_numpy(dtype=float))
              if p.get("weight") else np.ones(len(xy)))
    h = p["bandwidth"]
    full = len(ours)
    if full > 1000:  # a seeded sample of the cells of a large grid
        ours = ours.iloc[np.random.default_rng(1).choice(full, 1000, replace=False)]
    centres = np.column_stack([ours.geometry.centroid.x, ours.geometry.centroid.y])
    if p["kernel"] == "quartic":
        theirs = np.zeros(len(centres))
        for start in range(0, len(xy), 20000):
            d2 = ((centres[:, None, :] - xy[None, start:start + 20000, :]) ** 2).sum(axis=2) / (h * h)
            theirs += (np.where(d2 < 1, 3 / np.pi * (1 - d2) ** 2, 0)
                       * weight[None, start:start + 20000]).sum(axis=1) / (h * h)
    else:
        kde = KernelDensity(bandwidth=h, kernel=p["kernel"]).fit(xy, sample_weight=weight)
        theirs = weight.sum() * np.exp(kde.score_samples(centres))
    if not np.allclose(ours["density"], theirs, rtol=1e-9, atol=1e-15):
        worst = np.max(np.abs(ours["density"] - theirs) / np.maximum(theirs, 1e-300))
        problems.append(f"{label}: densities differ by up to {worst:.2e} (relative)")
    if full == len(ours) and (theirs > 0).sum() > len(ours) and p["kernel"] != "gaussian":
        problems.append(f"{label}: cells with density were dropped")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

fn step(capability: &str, params: Value) -> Value {
    json!([{"id": "s", "capability": capability, "params": params}])
}

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
