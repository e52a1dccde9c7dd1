//! The union and symmetric-difference overlays against GeoPandas' `overlay`: the uploaded
//! countries overlaid with 2-degree halos around their centroids, on the embedded and
//! PostGIS engines; the area of every (country, city) combination equal to GeoPandas' within
//! 1e-6 (pieces of one feature alone are keyed with the other side empty).

use serde_json::json;

use crate::common;
use common::real::run_python;
use common::uploads::{run, shared_datasets, shared_paths};

const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
warnings.filterwarnings("ignore")
cases = json.load(open(sys.argv[1]))
countries = gpd.read_file(cases[0]["countries"])
countries["geometry"] = countries.geometry.make_valid()
raw = gpd.read_file(cases[0]["countries"])
cities = gpd.GeoDataFrame({"ref_name": raw["name"]}, geometry=raw.geometry.centroid.buffer(2, 8), crs=raw.crs)
problems = []
def areas(frame, left, right):
    keys = frame[left].fillna("").astype(str) + " | " + frame[right].fillna("").astype(str)
    return frame.geometry.area.groupby(keys).sum()
for case in cases:
    how = case["how"]
    theirs = gpd.overlay(countries[["name", "geometry"]], cities, how=how, keep_geom_type=False)
    expected = areas(theirs, "name", "ref_name")
    ours = gpd.read_file(case["path"])
    got = areas(ours, "name", "ref_name")
    keys = set(expected.index[expected > 1e-9]) | set(got.index[got > 1e-9])
    bad = [k for k in keys if not np.isclose(got.get(k, 0.0), expected.get(k, 0.0), rtol=1e-6, atol=1e-9)]
    if bad:
        problems.append(f"{case['label']}: {len(bad)} of {len(keys)} pieces differ, first {bad[0]}: "
                        f"{got.get(bad[0], 0.0)} vs {expected.get(bad[0], 0.0)}")
    if len(keys) < 200:
        problems.append(f"{case['label']}: only {len(keys)} pieces")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn union_and_symmetric_difference_equal_geopandas_on_both_engines() {
    let (dir, state, [countries, _, _]) = shared_datasets("overlays").await;
    let [countries_path, _, _] = shared_paths();
    let mut manifest = Vec::new();
    for (capability, how) in [
        ("symmetric_difference", "symmetric_difference"),
        ("overlay_union", "union"),
    ] {
        for engine in ["embedded", "postgis"] {
            let steps = json!([
                {"id": "centres", "capability": "centroid", "params": {}},
                {"id": "halos", "capability": "buffer",
                 "params": {"distance": 2, "unit": "degrees"}},
                {"id": "kept", "capability": "select_columns", "params": {"fields": ["name"]}},
                {"id": "names", "capability": "select_columns", "input": "input",
                 "params": {"fields": ["name"]}},
                {"id": "pieces", "capability": capability,
                 "params": {"ref_layer": "kept"}},
            ]);
            let path = run(&state, &countries, engine, steps).await;
            manifest.push(
                json!({"label": format!("{engine} {capability}"), "path": path,
                "how": how, "countries": countries_path}),
            );
        }
    }
    let file = dir.path().join("overlays.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
