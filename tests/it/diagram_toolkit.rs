//! The layer-wide diagrams against Shapely 2: Voronoi cells (`voronoi_polygons`), Delaunay
//! triangles and edges (`delaunay_triangulation`) and faces (`polygonize`) of the uploaded
//! countries, cities and generated regions (NULL, empty and invalid geometries), each run
//! through `/api/pipelines/execute` on the embedded, PostGIS and native engines and compared
//! with Shapely's answer on the source file: Voronoi cells feature by feature, the pieces of
//! the other two id by id in the documented order, geometries within 1e-6 of their area by
//! symmetric difference (lines: equal after normalizing).

use serde_json::{Value, json};

use crate::common;
use common::pipeline::step;
use common::real::{real_layers, run_python};
use common::uploads::{run, shared_datasets, shared_paths, upload};

/// Compares each case with Shapely; prints one line per case that differs. Shapely's answers are
/// computed once per input (`reference_cache`), for every engine's result.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, shapely
from reference_cache import read_layer, remembered
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))

def same(a, b):
    if a is None or b is None or a.is_empty or b.is_empty:
        return (a is None or a.is_empty) == (b is None or b.is_empty)
    if shapely.get_dimensions(a) == 2:
        scale = max(a.area, b.area, 1e-300)
        return a.symmetric_difference(b).area <= 1e-6 * scale
    return shapely.normalize(a).equals_exact(shapely.normalize(b), 1e-9)

def valid(g):
    """GEOS MakeValid keeping the parts of the input's dimension, as `make_valid` does."""
    if g is None or shapely.is_valid(g):
        return g
    dimension = shapely.get_dimensions(g)
    parts = [part for part in shapely.get_parts(shapely.make_valid(g))
             if shapely.get_dimensions(part) == dimension]
    return shapely.union_all(parts) if parts else None

def site(g):
    if g is None or g.is_empty:
        return None
    return g if g.geom_type == "Point" else g.centroid

def voronoi(source, p):
    sites = [site(valid(g) if p.get("valid") else g) for g in source.geometry]
    points = shapely.MultiPoint([s for s in sites if s is not None])
    box = shapely.box(*p["envelope"]) if p.get("envelope") else None
    cells = list(shapely.get_parts(shapely.voronoi_polygons(points, extend_to=box)))
    if p.get("clip"):
        box = box if box is not None else points.envelope
    tree = shapely.STRtree(cells)
    out = []
    for s in sites:
        if s is None:
            out.append(None)
            continue
        hits = [cells[i] for i in tree.query(s, predicate="intersects")]
        cell = hits[0] if hits else None
        if cell is not None and p.get("clip"):
            cell = cell.intersection(box)
            cell = None if cell.is_empty else cell
        out.append(cell)
    return out

def ordered(pieces):
    key = lambda g: (g.bounds[0], g.bounds[1], shapely.to_wkb(shapely.normalize(g), byte_order=1))
    return sorted(pieces, key=key)

def pieces(source, capability, p):
    geoms = [g for g in source.geometry if g is not None and not g.is_empty]
    if capability == "delaunay_triangulation":
        mesh = shapely.delaunay_triangles(shapely.GeometryCollection(geoms), tolerance=p.get("tolerance", 0),
                                          only_edges=p.get("output") == "edges")
        return ordered(list(shapely.get_parts(mesh)))
    lines = [shapely.boundary(g) if g.geom_type in ("Polygon", "MultiPolygon") else g
             for g in geoms if g.geom_type in ("Polygon", "MultiPolygon", "LineString", "MultiLineString")]
    if not lines:
        return []
    return ordered(list(shapely.get_parts(shapely.polygonize([shapely.union_all(lines)]))))

def shapely_answer(source, capability, p):
    """Shapely's Voronoi cells, one per feature, or its pieces in the documented order."""
    if capability == "voronoi_polygons":
        return voronoi(source, p)
    return pieces(source, capability, p)

for case in cases:
    ours = gpd.read_file(case["path"])
    source = read_layer(case["source"])
    capability, p = case["capability"], {**case["params"], **case.get("reference", {})}
    answer = remembered("answer", lambda: shapely_answer(source, capability, p),
                        source, capability, p)
    if capability == "voronoi_polygons":
        key = case["key"]
        expected = dict(zip(source[key].astype(str), answer))
        mine = dict(zip(ours[key].astype(str), ours.geometry))
        if len(ours) != len(source) or set(mine) != set(expected):
            problems.append(f"{case['label']}: {len(ours)} rows, the source {len(source)}")
            continue
        bad = [k for k in expected if not same(mine[k], expected[k])]
    else:
        expected = answer
        ours = ours.sort_values("id")
        if list(ours["id"]) != list(range(1, len(expected) + 1)):
            problems.append(f"{case['label']}: {len(ours)} pieces numbered {list(ours['id'])[:5]}..., Shapely {len(expected)}")
            continue
        bad = [i for i, (a, b) in enumerate(zip(ours.geometry, expected)) if not same(a, b)]
    if bad:
        problems.append(f"{case['label']}: {len(bad)} of {len(ours)} differ, first {bad[0]}")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagrams_equal_shapely_on_every_engine() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("diagrams").await;
    let (regions_path, _) = real_layers(dir.path(), 0, 10.0);
    let regions = upload(
        &state,
        &[("regions.gpkg", std::fs::read(&regions_path).unwrap())],
    )
    .await;
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let regions_path = regions_path.display().to_string();
    let world = json!({"envelope": [-200.0, -100.0, 200.0, 100.0], "clip": true});
    let cases: Vec<(&String, &String, &str, &str, Value)> = vec![
        (&cities, &cities_path, "name", "voronoi_polygons", json!({})),
        (
            &cities,
            &cities_path,
            "name",
            "voronoi_polygons",
            json!({"clip": true}),
        ),
        (
            &countries,
            &countries_path,
            "name",
            "voronoi_polygons",
            world.clone(),
        ),
        (
            &regions,
            &regions_path,
            "id",
            "voronoi_polygons",
            json!({"clip": true}),
        ),
        (
            &cities,
            &cities_path,
            "",
            "delaunay_triangulation",
            json!({}),
        ),
        (
            &cities,
            &cities_path,
            "",
            "delaunay_triangulation",
            json!({"output": "edges"}),
        ),
        (
            &countries,
            &countries_path,
            "",
            "delaunay_triangulation",
            json!({}),
        ),
        (
            &countries,
            &countries_path,
            "",
            "delaunay_triangulation",
            json!({"output": "edges"}),
        ),
        (&countries, &countries_path, "", "polygonize", json!({})),
        (&boroughs, &boroughs_path, "", "polygonize", json!({})),
        (&regions, &regions_path, "", "polygonize", json!({})),
        (&cities, &cities_path, "", "polygonize", json!({})),
    ];
    let mut manifest = Vec::new();
    for (dataset, source, key, capability, params) in cases {
        // Invalid regions are made valid first: DuckDB's centroid of an invalid polygon (a
        // Voronoi site) is not GEOS's.
        let made_valid = dataset == &regions && capability == "voronoi_polygons";
        let steps = if made_valid {
            json!([{"id": "v", "capability": "make_valid", "params": {}},
                {"id": "s", "capability": capability, "params": params}])
        } else {
            step(capability, &params)
        };
        for engine in ["embedded", "postgis", "native"] {
            let path = run(&state, dataset, engine, steps.clone()).await;
            manifest.push(
                json!({"label": format!("{engine} {capability} {params} on {source}"),
                "path": path, "capability": capability, "params": params, "source": source,
                "key": key, "reference": {"valid": made_valid}}),
            );
        }
    }
    let file = dir.path().join("diagrams.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voronoi_envelope_that_is_not_a_box_is_refused() {
    let (_dir, state, [_, cities, _]) = shared_datasets("voronoi_refused").await;
    let request = json!({"dataset_id": cities, "engine": "embedded",
        "pipeline": {"name": "run", "steps": step("voronoi_polygons", json!({"envelope": [10, 0, 0, 10]}))}});
    let (status, body) = common::call(
        &state,
        common::post_json("/api/pipelines/execute", &request),
    )
    .await;
    assert_eq!(status.as_u16(), 422, "{body}");
    assert!(body.to_string().contains("xmin < xmax"), "{body}");
}
