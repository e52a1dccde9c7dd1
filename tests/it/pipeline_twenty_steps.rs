//! A 20-step pipeline mixing the toolkit's geometry and attribute capabilities with the older
//! ones, on the uploaded Natural Earth countries, run on the embedded, PostGIS, native and
//! hybrid engines: every engine writes the same rows (attributes equal, numbers within 1e-6 as
//! the engines' geodesic areas are, geometries equal within 1e-9 of their size whatever their
//! first vertex, or polygons within 1e-6 of their area). `simplify` and `snap_to_grid` are left
//! out: DuckDB's GEOS and Debian's 3.11 simplify and reduce precision differently (see the
//! golden tests).

use serde_json::{Value, json};

use crate::common;
use common::pipeline::ENGINES;
use common::real::run_python;
use common::uploads::{run, shared_datasets};

/// Prints the engines whose result differs from the embedded engine's.
const SAME_RESULTS: &str = r##"
import json, sys
import geopandas as gpd, numpy as np, pandas as pd, shapely
runs = json.load(open(sys.argv[1]))
frames = {engine: gpd.read_file(path) for engine, path in runs.items()}
first = frames["embedded"]
problems = []
if len(first) < 100:
    problems.append(f"only {len(first)} rows")
for engine, frame in frames.items():
    if list(frame.columns) != list(first.columns) or len(frame) != len(first):
        problems.append(f"{engine}: columns {list(frame.columns)}, {len(frame)} rows")
        continue
    for column in frame.columns:
        a, b = frame[column], first[column]
        if column == "geometry":
            same = [(x is None) == (y is None) and (x is None or shapely.normalize(x).equals_exact(shapely.normalize(y), 1e-9 * max(1.0, np.sqrt(y.area)))
                    or shapely.symmetric_difference(x, y).area <= 1e-6 * y.area)
                    for x, y in zip(a, b)]
        elif pd.api.types.is_float_dtype(a):
            same = np.isclose(a.to_numpy(float), b.to_numpy(float), rtol=1e-6, equal_nan=True)
        else:
            same = (a.astype(str) == b.astype(str)).to_numpy()
        if not np.all(same):
            worst = ""
            if pd.api.types.is_float_dtype(a):
                worst = f", worst relative {np.nanmax(np.abs(a.to_numpy(float) / b.to_numpy(float) - 1))}"
            if column == "geometry":
                worst = ", " + "; ".join(f"{first['name'][i]}: {shapely.symmetric_difference(a[i], b[i]).area / b[i].area}" for i in np.flatnonzero(~np.asarray(same))[:3])
            problems.append(f"{engine} differs from embedded in {column} ({int(np.sum(~np.asarray(same)))} rows{worst})")
print("\n".join(problems) or f"compared {len(runs)} engines")
"##;

fn twenty_steps() -> Value {
    let steps = [
        ("valid", "make_valid", json!({})),
        (
            "peopled",
            "filter",
            json!({"where": "pop_est > 0 AND continent <> 'Antarctica'"}),
        ),
        (
            "columns",
            "select_columns",
            json!({"fields": ["name", "continent", "pop_est", "gdp_md_est"]}),
        ),
        (
            "per_person",
            "calculate",
            json!({"expressions": {"gdp_per_person": "gdp_md_est * 1000000.0 / pop_est"}}),
        ),
        (
            "regions",
            "lookup_table",
            json!({"field": "continent", "output": "region",
                   "map": {"Africa": "EMEA", "Europe": "EMEA", "Asia": "APAC", "Oceania": "APAC"},
                   "default": "AMER"}),
        ),
        (
            "renamed",
            "rename_field",
            json!({"fields": {"pop_est": "population"}}),
        ),
        (
            "sized",
            "case_when",
            json!({"field": "size", "cases": [{"when": "population > 50000000", "then": "large"}],
                   "else": "small"}),
        ),
        ("flat", "drop_z", json!({})),
        ("smooth", "chaikin_smooth", json!({"iterations": 2})),
        (
            "dense",
            "densify_vertices",
            json!({"max_length": 250, "unit": "kilometers"}),
        ),
        ("reversed", "reverse_lines", json!({})),
        ("swapped", "swap_xy", json!({})),
        ("back", "swap_xy", json!({})),
        (
            "moved",
            "affine_transform",
            json!({"xoff": 0.25, "yoff": -0.125}),
        ),
        ("declared", "assign_projection", json!({"crs": "EPSG:4326"})),
        ("multi", "force_geometry_type", json!({"type": "multi"})),
        (
            "measured",
            "area_length",
            json!({"field_area": "area_km2", "unit": "km2"}),
        ),
        (
            "classes",
            "classify",
            json!({"field": "gdp_per_person", "method": "quantile", "classes": 5}),
        ),
        ("circles", "min_bounding_circle", json!({"segments": 4})),
        ("ordered", "sort", json!({"by": [{"field": "name"}]})),
    ];
    Value::Array(
        steps
            .into_iter()
            .map(|(id, capability, params)| json!({"id": id, "capability": capability, "params": params}))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twenty_step_pipeline_gives_the_same_result_on_every_engine() {
    let (dir, state, [countries, _, _]) = shared_datasets("twenty").await;
    let steps = twenty_steps();
    assert_eq!(steps.as_array().map(Vec::len), Some(20));
    let mut runs = serde_json::Map::new();
    for engine in ENGINES {
        let path = run(&state, &countries, engine, steps.clone()).await;
        runs.insert(engine.to_owned(), json!(path));
    }
    let file = dir.path().join("twenty.json");
    std::fs::write(&file, serde_json::to_vec(&runs).unwrap()).unwrap();
    let answer = run_python(SAME_RESULTS, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), "compared 4 engines");
}
