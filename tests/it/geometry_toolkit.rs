//! The per-feature geometry capabilities against Shapely 2: the Natural Earth countries and
//! cities (Shapefiles), the NYC boroughs (a zip) and the generated regions (NULL, empty and
//! invalid geometries) uploaded, each capability run through `/api/pipelines/execute` on the
//! embedded and PostGIS engines, and every feature compared with Shapely's answer on the source
//! file: the same count, geometries equal (exactly, or topologically, or polygons within 1e-6
//! of their area by symmetric difference).

use serde_json::{Value, json};

use crate::common;
use common::real::{real_layers, run_python};
use common::uploads::{run, shared_datasets, shared_paths, upload};

/// Compares each case with Shapely; prints one line per case that differs.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, shapely
from shapely import affinity, ops
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))

def merged_boundary(g):
    return shapely.line_merge(shapely.boundary(g))

def substring(g, p):
    line = merged_boundary(g)
    if line.geom_type != "LineString":
        return None
    return ops.substring(line, p["start"], p["end"], normalized=True)

def valid(g):
    """GEOS MakeValid keeping the parts of the input's dimension, as the capability does."""
    if shapely.is_valid(g):
        return g
    dimension = shapely.get_dimensions(g)
    parts = [part for part in shapely.get_parts(shapely.make_valid(g))
             if shapely.get_dimensions(part) == dimension]
    return shapely.union_all(parts) if parts else None

def single(g):
    return g.geoms[0] if g.geom_type.startswith("Multi") and len(g.geoms) == 1 else g

REFERENCE = {
    "boundary": lambda g, p: shapely.boundary(g),
    "envelope": lambda g, p: shapely.envelope(g),
    "make_valid": lambda g, p: valid(g),
    "swap_xy": lambda g, p: shapely.transform(g, lambda c: c[:, ::-1]),
    "reverse_lines": lambda g, p: shapely.reverse(g),
    "drop_z": lambda g, p: shapely.force_2d(g),
    "drop_m": lambda g, p: shapely.force_2d(g),
    "add_z": lambda g, p: shapely.force_3d(g, p.get("value", 0)),
    "add_m": lambda g, p: g,
    "line_merge": lambda g, p: merged_boundary(g),
    "line_substring": substring,
    "snap_to_grid": lambda g, p: shapely.set_precision(shapely.make_valid(g) if not shapely.is_valid(g) else g, p["size"]),
    "affine_transform": lambda g, p: affinity.affine_transform(
        g, [p["a"], p["b"], p["d"], p["e"], p["xoff"], p["yoff"]]),
    "force_geometry_type": lambda g, p: (
        g if g.geom_type.startswith("Multi") or g.geom_type == "GeometryCollection"
        else shapely.multipolygons([g]) if g.geom_type == "Polygon"
        else shapely.multilinestrings([g]) if g.geom_type == "LineString"
        else shapely.multipoints([g])) if p["type"] == "multi" else single(g),
}

def same(a, b):
    if a is None or b is None or (a.is_empty and b.is_empty):
        return (a is None or a.is_empty) == (b is None or b.is_empty)
    if shapely.equals_exact(shapely.normalize(a), shapely.normalize(b), tolerance=1e-9):
        return True
    if a.geom_type.endswith("Polygon") and b.geom_type.endswith("Polygon"):
        return shapely.symmetric_difference(a, b).area <= 1e-6 * max(b.area, 1e-12)
    return bool(shapely.equals(a, b))

for case in cases:
    label, p = case["label"], case["params"]
    ours = gpd.read_file(case["path"])
    source = gpd.read_file(case["source"])
    if len(ours) != len(source):
        problems.append(f"{label}: {len(ours)} rows, the source has {len(source)}")
        continue
    reference = REFERENCE[case["capability"]]
    bad = []
    for i, (mine, g) in enumerate(zip(ours.geometry, source.geometry)):
        theirs = None if g is None else reference(g, p)
        if not same(mine, theirs):
            bad.append(i)
    if case["capability"] == "add_z" and not all(g is None or g.is_empty or g.has_z for g in ours.geometry):
        problems.append(f"{label}: geometries without Z")
    if bad:
        problems.append(f"{label}: {len(bad)} of {len(ours)} features differ from Shapely's, first "
                        f"{bad[0]}: {ours.geometry[bad[0]]} vs source {source.geometry[bad[0]]}"[:400])
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

fn step(capability: &str, params: Value) -> Value {
    json!([{"id": "s", "capability": capability, "params": params}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn geometry_capabilities_equal_shapely_on_both_engines() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("toolkit").await;
    let (regions_path, _) = real_layers(dir.path(), 0, 10.0);
    let regions = upload(
        &state,
        &[("regions.gpkg", std::fs::read(&regions_path).unwrap())],
    )
    .await;
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let sources = [
        (&countries, countries_path),
        (&cities, cities_path),
        (&boroughs, boroughs_path),
        (&regions, regions_path.display().to_string()),
    ];
    let affine = json!({"a": 0.5, "b": -0.25, "d": 0.25, "e": 2.0, "xoff": 10.0, "yoff": -5.0});
    let cases: Vec<(&String, &str, Value, Value)> = vec![
        (
            &countries,
            "boundary",
            json!({}),
            step("boundary", json!({})),
        ),
        (&regions, "boundary", json!({}), step("boundary", json!({}))),
        (
            &boroughs,
            "envelope",
            json!({}),
            step("envelope", json!({})),
        ),
        (&regions, "envelope", json!({}), step("envelope", json!({}))),
        (
            &regions,
            "make_valid",
            json!({}),
            step("make_valid", json!({})),
        ),
        (&countries, "swap_xy", json!({}), step("swap_xy", json!({}))),
        (&regions, "swap_xy", json!({}), step("swap_xy", json!({}))),
        (
            &boroughs,
            "reverse_lines",
            json!({}),
            step("reverse_lines", json!({})),
        ),
        (
            &cities,
            "add_z",
            json!({"value": 12.5}),
            step("add_z", json!({"value": 12.5})),
        ),
        (&countries, "drop_z", json!({}), step("drop_z", json!({}))),
        (&cities, "drop_m", json!({}), step("drop_m", json!({}))),
        (
            &cities,
            "add_m",
            json!({"value": 3}),
            step("add_m", json!({"value": 3})),
        ),
        (
            &countries,
            "line_merge",
            json!({}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "m", "capability": "line_merge", "params": {}}]),
        ),
        (
            &countries,
            "line_substring",
            json!({"start": 0.2, "end": 0.7}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "m", "capability": "line_merge", "params": {}},
                   {"id": "s", "capability": "line_substring", "params": {"start": 0.2, "end": 0.7}}]),
        ),
        (
            &countries,
            "snap_to_grid",
            json!({"size": 0.5}),
            step("snap_to_grid", json!({"size": 0.5})),
        ),
        (
            &boroughs,
            "affine_transform",
            affine.clone(),
            step("affine_transform", affine.clone()),
        ),
        (
            &countries,
            "force_geometry_type",
            json!({"type": "multi"}),
            step("force_geometry_type", json!({"type": "multi"})),
        ),
        (
            &regions,
            "force_geometry_type",
            json!({"type": "single"}),
            step("force_geometry_type", json!({"type": "single"})),
        ),
    ];
    let mut manifest = Vec::new();
    for (dataset, capability, params, steps) in cases {
        let source = &sources.iter().find(|(id, _)| *id == dataset).unwrap().1;
        for engine in ["embedded", "postgis"] {
            let path = run(&state, dataset, engine, steps.clone()).await;
            manifest.push(json!({"label": format!("{engine} {steps}"), "path": path,
                "capability": capability, "params": params, "source": source}));
        }
    }
    let file = dir.path().join("toolkit.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
