//! The capabilities that make rows of the pieces of each geometry (`multipart_to_singleparts`,
//! `extract_vertices`, `extract_segments`, `extract_holes`) against Shapely 2: the uploaded
//! countries, cities, boroughs and generated regions (NULL, empty and invalid geometries), run
//! on the embedded and PostGIS engines and compared feature by feature, piece by piece.

use serde_json::json;

use crate::common;
use common::real::{real_layers, run_python};
use common::uploads::{run, shared_datasets, shared_paths, upload};

fn step(capability: &str) -> serde_json::Value {
    json!([{"id": "s", "capability": capability, "params": {}}])
}

/// Compares each exploding case with Shapely's parts (`get_parts`), vertices
/// (`get_coordinates`), segments (consecutive coordinates of every line and ring) or holes
/// (`interiors`), feature by feature through a unique key field.
const COMPARE_EXPLODED: &str = r##"
import json, sys
import geopandas as gpd, numpy as np, pandas as pd, shapely
problems = []
cases = json.load(open(sys.argv[1]))
for case in cases:
    ours = gpd.read_file(case["path"])
    source = gpd.read_file(case["source"])
    key, index = case["key"], case["index"]
    expected = []
    for _, row in source.iterrows():
        g = row.geometry
        if g is None or g.is_empty:
            parts = []
        elif case["capability"] == "extract_vertices":
            parts = list(shapely.points(shapely.get_coordinates(g)))
        elif case["capability"] == "extract_segments":
            lines = [l for p in shapely.get_parts(g) for l in
                     ([p.exterior, *p.interiors] if p.geom_type == "Polygon" else [p] if p.geom_type == "LineString" else [])]
            parts = [shapely.LineString(c[i:i + 2]) for l in lines
                     for c in [np.asarray(l.coords)] for i in range(len(c) - 1)]
        elif case["capability"] == "extract_holes":
            parts = [shapely.Polygon(r) for p in shapely.get_parts(g) if p.geom_type == "Polygon"
                     for r in p.interiors]
        else:
            parts = list(shapely.get_parts(g))
        expected += [(str(row[key]), n + 1, p) for n, p in enumerate(parts)] or [(str(row[key]), None, None)]
    # A column of NULL geometries only reads as NaN.
    mine = [(str(r[key]), None if pd.isna(r[index]) else int(r[index]),
             r.geometry if isinstance(r.geometry, shapely.Geometry) else None) for _, r in ours.iterrows()]
    order = lambda t: (t[0], t[1] or 0)
    expected.sort(key=order)
    mine.sort(key=order)
    if len(mine) != len(expected):
        problems.append(f"{case['label']}: {len(mine)} rows, Shapely {len(expected)}")
        continue
    bad = [i for i, (a, b) in enumerate(zip(mine, expected))
           if a[0] != b[0] or a[1] != b[1] or (a[2] is None) != (b[2] is None)
           or (a[2] is not None and not a[2].equals_exact(b[2], 1e-12))]
    if bad:
        problems.append(f"{case['label']}: {len(bad)} of {len(mine)} rows differ, first {mine[bad[0]]} vs {expected[bad[0]]}"[:300])
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
            let path = run(&state, dataset, engine, step(capability)).await;
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
