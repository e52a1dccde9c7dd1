//! `line_locate_point` against Shapely 2: generated points located along generated lines (the
//! NYC boroughs' outlines, lines that merge and lines that do not, a line of zero length,
//! empty, NULL and polygon references) and the Natural Earth cities along the countries'
//! borders, uploaded and run through `/api/pipelines/execute` on the embedded, PostGIS,
//! native and hybrid engines. For every point: the distance equals Shapely's distance to the
//! nearest line within 1e-9 (relative), the line chosen is one of the nearest, and the
//! fraction equals `line.project(point, normalized=True)` on that line (merged with
//! `line_merge(directed=True)`; NULL when it does not merge into one line) within 1e-9.
//! NULL, empty and non-point inputs get NULL fraction, distance and line.

use serde_json::{Value, json};

use crate::common;
use crate::common::real::generated_nyc;
use crate::common::uploads::upload_file;
use common::pipeline::ENGINES;
use common::real::run_python;
use common::uploads::{run, shared_datasets, shared_paths};

/// Compares each case with Shapely, point by point. Shapely's nearest lines and fractions are
/// computed once per input (`reference_cache`), for every engine's result.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
from reference_cache import read_layer as read, remembered
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))
def usable(g):
    return g is not None and not g.is_empty

def fraction_along(line, point):
    merged = line if line.geom_type == "LineString" else shapely.line_merge(line, directed=True)
    if merged.geom_type != "LineString":
        return None
    return 0.0 if merged.length == 0 else float(merged.project(point, normalized=True))

def reference_locations(points, keys, geoms):
    """Per point (None where it is not a usable point, or without lines): Shapely's distance to
    the nearest lines and, per nearest line's key, (the fraction along it or None where it does
    not merge into one line, whether it has zero length)."""
    by_key = dict(zip(keys, geoms))
    answers = []
    for g in points:
        if not usable(g) or g.geom_type != "Point" or not len(geoms):
            answers.append(None)
            continue
        d = shapely.distance(g, geoms)
        best = float(d.min())
        nearest = {keys[i] for i in np.flatnonzero(d <= best + 1e-9 * max(1.0, best))}
        answers.append((best, {k: (fraction_along(by_key[k], g), by_key[k].length == 0)
                               for k in nearest}))
    return answers

for case in cases:
    label, p = case["label"], case["params"]
    source, refs = read(case["source"]), read(case["ref"])
    ref_geoms = refs.geometry.boundary if case.get("ref_boundary") else refs.geometry
    lines = refs[[usable(g) and g.geom_type in ("LineString", "MultiLineString") for g in ref_geoms]]
    line_geoms = ref_geoms[lines.index]
    keys, geoms = lines[case["line_key"]].tolist(), line_geoms.values
    ours = gpd.read_file(case["path"])
    if len(ours) != len(source):
        problems.append(f"{label}: {len(ours)} rows, the source has {len(source)}")
        continue
    located_by = remembered("locations", lambda: reference_locations(source.geometry, keys, geoms),
                            source.geometry, keys, line_geoms)
    ours = ours.set_index(case["key"])
    out_key, fraction_field = case["line_key_out"], p.get("fraction_field", "fraction")
    distance_field = p.get("distance_field", "distance")
    bad, located, undefined, zero_length = [], 0, 0, 0
    for (_, row), answer in zip(source.iterrows(), located_by):
        mine = ours.loc[row[case["key"]]]
        got = (mine[distance_field], mine[out_key], mine[fraction_field])
        if answer is None:
            if not all(pd.isna(v) for v in got):
                bad.append((row[case["key"]], got, "expected NULL"))
            continue
        best, nearest = answer
        got_d, got_key, got_f = got
        if pd.isna(got_d) or abs(got_d - best) > 1e-9 * max(1.0, best):
            bad.append((row[case["key"]], got_d, best, "distance"))
            continue
        key = got_key if isinstance(got_key, str) else None if pd.isna(got_key) else int(got_key)
        if key not in nearest:
            bad.append((row[case["key"]], key, sorted(nearest)[:3], "line"))
            continue
        expected, zero = nearest[key]
        if expected is None:
            undefined += 1
            if not pd.isna(got_f):
                bad.append((row[case["key"]], key, got_f, "expected a NULL fraction"))
            continue
        located += 1
        zero_length += zero
        if pd.isna(got_f) or abs(got_f - expected) > 1e-9:
            bad.append((row[case["key"]], key, got_f, expected, "fraction"))
    if bad:
        problems.append(f"{label}: {len(bad)} of {len(source)} points differ, first {bad[0]}")
    if located < 100 or (case.get("expect_all_kinds") and not (undefined and zero_length)):
        problems.append(f"{label}: {located} located, {undefined} undefined, {zero_length} on a zero-length line")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn located_points_equal_shapely_on_every_engine() {
    let (dir, state, [countries, cities, _]) = shared_datasets("locate").await;
    let [countries_path, cities_path, _] = shared_paths();
    let (points_path, lines_path) = generated_nyc(dir.path());
    let points = upload_file(&state, &points_path).await;
    let lines = upload_file(&state, &lines_path).await;
    let along_lines = json!({"ref_layer": lines, "columns": ["line_id", "name"]});
    let along_borders = json!({"ref_layer": "borders", "columns": ["name"],
        "fraction_field": "along", "distance_field": "gap"});
    let cases: Vec<(&String, &String, Value, Value, Value)> = vec![
        (
            &points,
            &points_path,
            along_lines.clone(),
            json!([{"id": "located", "capability": "line_locate_point", "params": along_lines}]),
            json!({"ref": lines_path, "key": "pid", "line_key": "line_id",
                "line_key_out": "line_id", "expect_all_kinds": true}),
        ),
        (
            &cities,
            &cities_path,
            along_borders.clone(),
            json!([{"id": "borders", "capability": "boundary", "input": countries, "params": {}},
                   {"id": "located", "capability": "line_locate_point", "input": "input",
                    "params": along_borders}]),
            json!({"ref": countries_path, "key": "name", "line_key": "name",
                "line_key_out": "ref_name", "ref_boundary": true}),
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
    let file = dir.path().join("locate.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
