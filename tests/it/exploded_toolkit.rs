//! The capabilities that make rows of the pieces of each geometry (`multipart_to_singleparts`,
//! `extract_vertices`, `extract_segments`, `extract_holes`) against Shapely 2: the uploaded
//! countries, cities, boroughs and generated regions (NULL, empty and invalid geometries), run
//! on the embedded and PostGIS engines and compared feature by feature, piece by piece.

use serde_json::json;

use crate::common;
use common::pipeline::step;
use common::real::{real_layers, run_python};
use common::uploads::{run, shared_datasets, shared_paths, upload};

/// Compares each exploding case with Shapely's parts (`get_parts`), vertices
/// (`get_coordinates`), segments (consecutive coordinates of every line and ring) or holes
/// (`interiors`), feature by feature through a unique key field. Shapely's rows are computed
/// once per source and capability (`reference_cache`), for both engines' results.
const COMPARE_EXPLODED: &str = r##"
import json, sys
import geopandas as gpd, numpy as np, pandas as pd, shapely
from reference_cache import read_layer, remembered
problems = []
cases = json.load(open(sys.argv[1]))

def lines_of(g):
    """Every line and ring of `g`, in order."""
    return [l for p in shapely.get_parts(g) for l in
            ([p.exterior, *p.interiors] if p.geom_type == "Polygon" else [p] if p.geom_type == "LineString" else [])]

def pieces(g, capability):
    """Shapely's pieces of one geometry, in order, as an array of geometries."""
    if capability == "extract_vertices":
        return shapely.points(shapely.get_coordinates(g))
    if capability == "extract_segments":
        segments = []
        for line in lines_of(g):
            c = shapely.get_coordinates(line, include_z=line.has_z)
            segments.append(shapely.linestrings(np.stack([c[:-1], c[1:]], axis=1)))
        return np.concatenate(segments) if segments else np.empty(0, dtype=object)
    if capability == "extract_holes":
        return np.array([shapely.Polygon(r) for p in shapely.get_parts(g) if p.geom_type == "Polygon"
                         for r in p.interiors], dtype=object)
    return shapely.get_parts(g)

def in_order(keys, numbers, geometries):
    """The rows sorted by key, then piece number (a feature without pieces counts as 0)."""
    order = np.lexsort((np.where(numbers < 0, 0, numbers), keys))
    return keys[order], numbers[order], geometries[order]

def shapely_rows(feature_keys, source_geometries, capability):
    """Shapely's rows of a layer in order (see `in_order`): (key, piece number from 1, piece),
    or (key, -1, None) for a feature without pieces; the pieces as WKB, compact to keep and
    read back all at once."""
    keys, numbers, geometries = [], [], []
    for k, g in zip(feature_keys, source_geometries):
        parts = pieces(g, capability) if g is not None and not g.is_empty else []
        if len(parts):
            keys.append(np.full(len(parts), k, dtype=object))
            numbers.append(np.arange(1, len(parts) + 1))
            geometries.append(np.asarray(parts, dtype=object))
        else:
            keys.append(np.array([k], dtype=object))
            numbers.append(np.array([-1]))
            geometries.append(np.array([None], dtype=object))
    keys, numbers, geometries = in_order(np.concatenate(keys).astype(str), np.concatenate(numbers),
                                         np.concatenate(geometries))
    return keys, numbers, shapely.to_wkb(geometries)

for case in cases:
    ours = gpd.read_file(case["path"])
    source = read_layer(case["source"])
    key, index = case["key"], case["index"]
    feature_keys = source[key].astype(str)
    keys, numbers, wkb = remembered(
        "rows", lambda: shapely_rows(feature_keys, source.geometry, case["capability"]),
        feature_keys, source.geometry, case["capability"])
    expected = (keys, numbers, shapely.from_wkb(wkb))
    # A column of NULL geometries only reads as NaN.
    mine = in_order(ours[key].astype(str).to_numpy(dtype=str),
                    ours[index].fillna(-1).to_numpy(dtype=np.int64),
                    np.array([g if isinstance(g, shapely.Geometry) else None for g in ours.geometry],
                             dtype=object))
    if len(mine[0]) != len(expected[0]):
        problems.append(f"{case['label']}: {len(mine[0])} rows, Shapely {len(expected[0])}")
        continue
    missing_mine, missing_expected = pd.isna(mine[2]), pd.isna(expected[2])
    differ = ((mine[0] != expected[0]) | (mine[1] != expected[1]) | (missing_mine != missing_expected)
              | (~missing_mine & ~missing_expected & ~shapely.equals_exact(mine[2], expected[2], tolerance=1e-12)))
    bad = np.flatnonzero(differ)
    if len(bad):
        i = bad[0]
        problems.append(f"{case['label']}: {len(bad)} of {len(mine[0])} rows differ, first "
                        f"{[m[i] for m in mine]} vs {[e[i] for e in expected]}"[:300])
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_vertices_segments_and_holes_equal_shapely_on_both_engines() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("exploded").await;
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let (regions_path, _) = real_layers(dir.path(), 0, 10.0);
    let regions = upload(
        &state,
        &[("regions.gpkg", std::fs::read(&regions_path).unwrap())],
    )
    .await;
    let regions_path = regions_path.display().to_string();
    let cases = [
        (
            &regions,
            regions_path.clone(),
            "id",
            "extract_segments",
            "segment",
        ),
        (
            &cities,
            cities_path.clone(),
            "name",
            "extract_segments",
            "segment",
        ),
        (
            &boroughs,
            boroughs_path.clone(),
            "BoroCode",
            "extract_segments",
            "segment",
        ),
        (&regions, regions_path, "id", "extract_holes", "hole"),
        (
            &countries,
            countries_path.clone(),
            "name",
            "extract_holes",
            "hole",
        ),
        (
            &boroughs,
            boroughs_path.clone(),
            "BoroCode",
            "extract_holes",
            "hole",
        ),
        (
            &countries,
            countries_path.clone(),
            "name",
            "multipart_to_singleparts",
            "part",
        ),
        (
            &boroughs,
            boroughs_path.clone(),
            "BoroCode",
            "multipart_to_singleparts",
            "part",
        ),
        (
            &cities,
            cities_path,
            "name",
            "multipart_to_singleparts",
            "part",
        ),
        (
            &boroughs,
            boroughs_path,
            "BoroCode",
            "extract_vertices",
            "vertex",
        ),
        (
            &countries,
            countries_path,
            "name",
            "extract_vertices",
            "vertex",
        ),
    ];
    let mut manifest = Vec::new();
    for (dataset, source, key, capability, index) in cases {
        for engine in ["embedded", "postgis"] {
            let path = run(&state, dataset, engine, step(capability, json!({}))).await;
            manifest.push(
                json!({"label": format!("{engine} {capability} {key}"), "path": path,
                "capability": capability, "source": source, "key": key, "index": index}),
            );
        }
    }
    let file = dir.path().join("exploded.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE_EXPLODED, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
