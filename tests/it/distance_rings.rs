//! `classify_by_ring` against GeoPandas and numpy: the Natural Earth cities ringed around the
//! countries and around their borders (lon/lat, rings in degrees), and generated points around
//! the NYC boroughs (State Plane feet, rings in metres: NULL, empty, multi-point, line and
//! polygon inputs), uploaded and run through `/api/pipelines/execute` on the embedded,
//! PostGIS, native and hybrid engines. Every feature's distance equals Shapely's distance to
//! the nearest reference geometry within 1e-9 (relative), and its ring equals
//! `numpy.searchsorted(rings, distance) + 1` (NULL beyond the last ring, or for a NULL or empty
//! geometry, or an empty reference layer).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common;
use common::pipeline::ENGINES;
use common::real::generated_nyc;
use common::real::run_python;
use common::uploads::{run, shared_datasets, shared_paths, upload_file};
use common::{call, post_json};

/// Compares each case with Shapely's distances and numpy's bands, feature by feature. Shapely's
/// distances are computed once per input (`reference_cache`), for every engine's result.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
from reference_cache import read_layer as read, remembered
warnings.filterwarnings("ignore")
problems = []
METRES = {"meters": 1.0, "kilometers": 1000.0, "feet": 0.3048, "miles": 1609.344}
cases = json.load(open(sys.argv[1]))
def reference_distances(geometries, refs, boundary, none, factor):
    """How many reference geometries there are (the ring layer's non-empty ones, their
    boundaries with `boundary`, none with `none`) and each feature's distance to the nearest
    (NaN for a NULL or empty feature, or without reference geometries), times `factor`."""
    if boundary:
        refs = refs.boundary
    if none:
        refs = refs.iloc[0:0]
    targets = np.array([g for g in refs if g is not None and not g.is_empty], dtype=object)
    distances = np.full(len(geometries), np.nan)
    for i, g in enumerate(geometries):
        if g is not None and not g.is_empty and len(targets):
            distances[i] = float(shapely.distance(g, targets).min()) * factor
    return len(targets), distances

for case in cases:
    label, p = case["label"], case["params"]
    source, refs = read(case["source"]), read(case["ref"])
    boundary, none = bool(case.get("ref_boundary")), bool(case.get("ref_where_none"))
    unit = p.get("unit", "crs")
    factor = 1.0 if unit in ("crs", "degrees") else source.crs.axis_info[0].unit_conversion_factor / METRES[unit]
    reference_count, distances = remembered(
        "distances", lambda: reference_distances(source.geometry, refs.geometry, boundary, none, factor),
        source.geometry, refs.geometry, boundary, none, factor)
    rings = np.asarray(p["rings"], dtype=float)
    ours = gpd.read_file(case["path"])
    if len(ours) != len(source):
        problems.append(f"{label}: {len(ours)} rows, the source has {len(source)}")
        continue
    ours = ours.set_index(case["key"])
    ring_field, distance_field = p.get("ring_field", "ring"), p.get("distance_field", "distance")
    bad, near_bounds, seen = [], 0, set()
    for (_, row), d in zip(source.iterrows(), distances):
        g, mine = row.geometry, ours.loc[row[case["key"]]]
        got_d, got_ring = mine[distance_field], mine[ring_field]
        if g is None or g.is_empty or reference_count == 0:
            if not (pd.isna(got_d) and pd.isna(got_ring)):
                bad.append((row[case["key"]], got_d, got_ring, "expected NULL"))
            continue
        d = float(d)
        index = int(np.searchsorted(rings, d, side="left"))
        ring = index + 1 if index < len(rings) else None
        seen.add(ring)
        if pd.isna(got_d) or abs(got_d - d) > 1e-9 * max(1.0, abs(d)):
            bad.append((row[case["key"]], got_d, d, "distance"))
            continue
        got_ring = None if pd.isna(got_ring) else int(got_ring)
        if got_ring != ring:
            # Only a distance within rounding of a ring's bound may fall on its other side.
            if np.min(np.abs(rings - d)) <= 1e-9 * max(1.0, d):
                near_bounds += 1
            else:
                bad.append((row[case["key"]], got_ring, ring, d))
    if bad:
        problems.append(f"{label}: {len(bad)} of {len(source)} features differ, first {bad[0]}")
    if near_bounds > 2:
        problems.append(f"{label}: {near_bounds} rings differ at their bounds")
    if reference_count and len(seen) < min(3, len(rings) + 1):
        problems.append(f"{label}: only rings {seen} occur")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

/// The run's report of where its native stages ran (`[{relation, ran, declined}]`).
async fn native_report(
    state: &geomill::state::AppState,
    dataset: &str,
    steps: &Value,
) -> Vec<Value> {
    let request = json!({"dataset_id": dataset, "engine": "native",
        "pipeline": {"name": "run", "steps": steps}});
    let (status, run) = call(state, post_json("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::OK, "{run}");
    run["native"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rings_equal_geopandas_on_every_engine() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("rings").await;
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let (points_path, _) = generated_nyc(dir.path());
    let points = upload_file(&state, &points_path).await;
    let rings_step = |input: &str, params: Value| json!({"id": "rings", "capability": "classify_by_ring", "input": input, "params": params});
    let degrees = json!({"ref_layer": countries, "rings": [0, 2, 10], "unit": "degrees"});
    let borders = json!({"ref_layer": "borders", "rings": [0.5, 1, 2, 5]});
    let metres = json!({"ref_layer": boroughs, "rings": [0, 100, 1000, 5000], "unit": "meters",
        "ring_field": "band", "distance_field": "metres"});
    let none = json!({"ref_layer": "nothing", "rings": [1000], "unit": "feet"});
    let cases: Vec<(&String, &String, Value, Value, Value)> = vec![
        (
            &cities,
            &cities_path,
            degrees.clone(),
            json!([rings_step("input", degrees)]),
            json!({"ref": countries_path, "key": "name"}),
        ),
        (
            &cities,
            &cities_path,
            borders.clone(),
            json!([{"id": "borders", "capability": "boundary", "input": countries, "params": {}},
                   rings_step("input", borders)]),
            json!({"ref": countries_path, "key": "name", "ref_boundary": true}),
        ),
        (
            &points,
            &points_path,
            metres.clone(),
            json!([rings_step("input", metres)]),
            json!({"ref": boroughs_path, "key": "pid"}),
        ),
        (
            &points,
            &points_path,
            none.clone(),
            json!([{"id": "nothing", "capability": "filter", "input": boroughs,
                    "params": {"where": "\"BoroCode\" < 0"}},
                   rings_step("input", none)]),
            json!({"ref": boroughs_path, "key": "pid", "ref_where_none": true}),
        ),
    ];
    let mut manifest = Vec::new();
    for (dataset, source, params, steps, reference) in &cases {
        for engine in ENGINES {
            let path = run(&state, dataset, engine, steps.clone()).await;
            let mut case = json!({"label": format!("{engine} {steps}"), "path": path,
                "source": source, "params": params});
            case.as_object_mut()
                .unwrap()
                .extend(reference.as_object().unwrap().clone());
            manifest.push(case);
        }
    }
    let file = dir.path().join("rings.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));

    // Points against polygons run on the native nearest kernel; lines make it decline (the
    // step then runs as SQL, and the run says so).
    let (_, _, _, steps, _) = &cases[0];
    let stages = native_report(&state, &cities, steps).await;
    assert!(stages.iter().any(|s| s["ran"] == "native"), "{stages:?}");
    let (_, _, _, steps, _) = &cases[1];
    let stages = native_report(&state, &cities, steps).await;
    assert!(
        stages.iter().any(|s| s["ran"] == "sql"
            && s["declined"]
                .as_str()
                .is_some_and(|d| d.contains("polygons"))),
        "{stages:?}"
    );
}

#[tokio::test]
async fn rings_in_metres_on_lonlat_data_are_refused() {
    let (_dir, state, [countries, cities, _]) = shared_datasets("rings_refused").await;
    for (params, says) in [
        (
            json!({"ref_layer": countries, "rings": [1000], "unit": "meters"}),
            "reproject",
        ),
        (
            json!({"ref_layer": countries, "rings": [5, 1]}),
            "strictly ascending",
        ),
    ] {
        let request = json!({"dataset_id": cities, "engine": "embedded", "pipeline": {
            "name": "run", "steps": [{"id": "rings", "capability": "classify_by_ring",
            "params": params}]}});
        let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(says), "{body}");
    }
}
