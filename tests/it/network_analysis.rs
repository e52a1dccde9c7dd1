//! The network analyses against networkx, on the generated street grid (`benches/street_grid.py`:
//! 50,000 streets with one-way rows and columns, bent streets, NULL costs, an island, a
//! two-part street, NULL and empty geometries) uploaded as GeoPackages. Each capability runs
//! through `/api/pipelines/execute` on every engine mode (the PostGIS engine's od_matrix and
//! shortest_path through pgRouting), and a Python script rebuilds the graph with networkx from
//! the same files and compares every row: costs within 1e-9 relative, paths' lengths, reached
//! edges and their bands, hull areas, allocated facilities, components, spanning-forest weight.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common;
use common::pipeline::ENGINES;
use common::real::run_python;
use common::uploads::{
    countries_on_every_engine, run, shared_datasets, shared_paths, upload, upload_file,
};
use common::{call, post_json};

/// Checks every case of a manifest against networkx (the script says how).
const REFERENCE: &str = include_str!("network_reference.py");

/// Uploads one generated file; answers its dataset id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_analyses_equal_networkx_on_a_street_grid_on_every_engine() {
    let (dir, state, _countries) = countries_on_every_engine("network_analysis").await;
    let folder = dir.path().join("grid");
    let script = common::golden::repo().join("benches/street_grid.py");
    let made = std::process::Command::new(common::real::python())
        .arg(&script)
        .arg(&folder)
        .args(["--points", "40"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let streets_path = folder.join("streets.gpkg");
    let streets = upload_file(&state, &streets_path).await;
    let origins = upload_file(&state, &folder.join("origins.gpkg")).await;
    let destinations = upload_file(&state, &folder.join("destinations.gpkg")).await;
    let file = |name: &str| folder.join(name).display().to_string();

    let od = json!({"origins": origins, "origin_id": "id", "destinations": destinations,
        "destination_id": "id", "oneway_field": "oneway"});
    let mut minutes = od.clone();
    minutes["cost_field"] = json!("minutes");
    let few = json!({"origins": origins, "origin_id": "id", "destinations": destinations,
        "destination_id": "id", "directed": false});
    let cases: Vec<(&str, Value)> = vec![
        ("od_matrix", od.clone()),
        ("od_matrix", minutes),
        ("shortest_path", od),
        ("shortest_path", few),
        (
            "isochrone",
            json!({"origins": origins, "origin_id": "id", "bands": [250, 600],
            "oneway_field": "oneway"}),
        ),
        (
            "isochrone",
            json!({"origins": origins, "origin_id": "id", "bands": [3, 6],
            "cost_field": "minutes", "output": "polygons"}),
        ),
        (
            "network_allocation",
            json!({"facilities": destinations, "facility_id": "id",
            "oneway_field": "oneway"}),
        ),
        ("connectivity_check", json!({"cost_field": "minutes"})),
        ("mst", json!({})),
    ];
    let points = |name: &str| json!({"path": file(name), "id": "id"});
    let sources = json!({"lines": {"streets": streets_path, "key": ["id"]},
        "origins": points("origins.gpkg"), "destinations": points("destinations.gpkg"),
        "facilities": points("destinations.gpkg")});
    let mut manifest = Vec::new();
    for (capability, params) in &cases {
        for engine in ENGINES {
            let steps = json!([{"id": "n", "capability": capability, "params": params}]);
            let path = run(&state, &streets, engine, steps).await;
            manifest.push(case(&sources, engine, capability, params, &path));
        }
    }
    let list = dir.path().join("network.json");
    std::fs::write(&list, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(REFERENCE, &[&list.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}

/// One case of the reference script's manifest: where the graph and points come from
/// (`sources`), what ran and where its result is.
fn case(sources: &Value, engine: &str, capability: &str, params: &Value, path: &str) -> Value {
    let mut case = sources.clone();
    case["label"] = json!(format!("{engine} {capability} {params}"));
    case["kind"] = json!(capability);
    case["params"] = params.clone();
    case["path"] = json!(path);
    case
}

/// Writes 30 seeded points inside the boroughs `argv[1]` and one without a geometry to the
/// GeoPackage `argv[2]` (ids 1 to 31, in the boroughs' CRS).
const PLACES: &str = r##"
import sys, numpy as np, geopandas as gpd, shapely
boroughs = gpd.read_file(sys.argv[1])
land = shapely.union_all(boroughs.geometry.values)
shapely.prepare(land)
rng = np.random.default_rng(23)
x0, y0, x1, y1 = land.bounds
points = []
while len(points) < 30:
    p = shapely.Point(rng.uniform(x0, x1), rng.uniform(y0, y1))
    if land.contains(p):
        points.append(p)
frame = gpd.GeoDataFrame({"id": range(1, 32)}, geometry=points + [None], crs=boroughs.crs)
frame.to_file(sys.argv[2], driver="GPKG")
"##;

/// The boroughs' rings as a network (`extract_segments`: 76,000 segments in 106 rings, some
/// shared between boroughs), their centroids and seeded places as points: every analysis on
/// every engine equals networkx over the graph rebuilt from the rings in Python.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_analyses_equal_networkx_on_the_boroughs_rings_on_every_engine() {
    let (dir, state, [_, _, boroughs]) = shared_datasets("network_boroughs").await;
    let [_, _, boroughs_path] = shared_paths();
    let places_path = dir.path().join("places.gpkg");
    let places_file = places_path.display().to_string();
    run_python(PLACES, &[&boroughs_path, &places_file]);
    let places = upload_file(&state, &places_path).await;

    let centres = json!({"origins": "centres", "origin_id": "BoroName"});
    let to_places = json!({"origins": "centres", "origin_id": "BoroName",
        "destinations": places, "destination_id": "id"});
    let mut by_code = to_places.clone();
    by_code["cost_field"] = json!("BoroCode");
    let mut bands = centres.clone();
    bands["bands"] = json!([3000, 12000]);
    let mut polygons = bands.clone();
    polygons["output"] = json!("polygons");
    let cases: Vec<(&str, Value)> = vec![
        ("od_matrix", to_places.clone()),
        ("od_matrix", by_code),
        ("shortest_path", to_places),
        ("isochrone", bands),
        ("isochrone", polygons),
        (
            "network_allocation",
            json!({"facilities": places, "facility_id": "id"}),
        ),
        ("connectivity_check", json!({})),
        ("mst", json!({})),
    ];
    let sources = json!({
        "lines": {"rings": boroughs_path, "name": "BoroName", "key": ["BoroName", "segment"]},
        "origins": {"centroids": boroughs_path, "id": "BoroName"},
        "destinations": {"path": places_file, "id": "id"},
        "facilities": {"path": places_file, "id": "id"}});
    let mut manifest = Vec::new();
    for (capability, params) in &cases {
        for engine in ENGINES {
            let steps = json!([
                {"id": "edges", "capability": "extract_segments", "params": {}},
                {"id": "centres", "capability": "centroid", "input": boroughs, "params": {}},
                {"id": "n", "capability": capability, "input": "edges", "params": params}]);
            let path = run(&state, &boroughs, engine, steps).await;
            manifest.push(case(&sources, engine, capability, params, &path));
        }
    }
    let list = dir.path().join("boroughs.json");
    std::fs::write(&list, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(REFERENCE, &[&list.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}

/// Three lines in a row, the middle one drawn backwards, and a fork: facilities `z` and `c` on
/// the first node, `a` on the last. Equal costs go to the facility on the lower node, and on
/// one node to the lowest id, on every engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocation_breaks_equal_costs_by_node_then_id_on_every_engine() {
    let (_dir, state, _countries) = countries_on_every_engine("network_ties").await;
    let line = |name: &str, cost: f64, coords: Value| {
        json!({"type": "Feature", "properties": {"name": name, "minutes": cost},
            "geometry": {"type": "LineString", "coordinates": coords}})
    };
    let lines = json!({"type": "FeatureCollection", "features": [
        line("first", 1.0, json!([[0, 0], [1, 0]])),
        line("middle", 1.0, json!([[2, 0], [1, 0]])),
        line("last", 1.0, json!([[2, 0], [3, 0]])),
        line("up_left", 2.5, json!([[0, 0], [1.5, 2]])),
        line("up_right", 2.5, json!([[3, 0], [1.5, 2]])),
        line("top", 1.0, json!([[1.5, 2], [1.5, 3]])),
        line("away", 1.0, json!([[9, 9], [9, 10]])),
    ]});
    let point = |id: &str, x: f64| {
        json!({"type": "Feature", "properties": {"id": id},
            "geometry": {"type": "Point", "coordinates": [x, 0]}})
    };
    let facilities = json!({"type": "FeatureCollection", "features": [
        point("z", 0.0), point("c", 0.0), point("a", 3.0)]});
    let lines = upload(&state, &[("lines.geojson", lines.to_string().into_bytes())]).await;
    let facilities = upload(
        &state,
        &[("facilities.geojson", facilities.to_string().into_bytes())],
    )
    .await;
    let want = "first c 1|middle c 2|last a 1|up_left c 2.5|up_right a 2.5|top c 3.5|away - -";
    for engine in ENGINES {
        let steps = json!([{"id": "n", "capability": "network_allocation",
            "params": {"facilities": facilities, "facility_id": "id", "cost_field": "minutes"}}]);
        let path = run(&state, &lines, engine, steps).await;
        let got = run_python(
            r#"
import sys, geopandas as gpd
def text(v):
    return "-" if v is None or v != v else (v if isinstance(v, str) else f"{v:g}")
f = gpd.read_file(sys.argv[1])
print("|".join(f"{r['name']} {text(r.facility)} {text(r.cost)}" for _, r in f.iterrows()))
"#,
            &[&path],
        );
        assert_eq!(got.trim(), want, "{engine}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgis_routes_through_pgrouting_and_bad_parameters_are_named() {
    let (_dir, state, countries) = countries_on_every_engine("network_params").await;
    let params = json!({"origins": "input", "origin_id": "name", "destinations": "input",
        "destination_id": "name"});
    let catalog = json!({"sources": {"input": {"crs": "EPSG:4326", "columns": [
        {"name": "name", "type": "text"}, {"name": "geom", "type": "geometry"}]}}});
    let with = json!({"engine": "postgis", "params": params, "catalog": catalog});
    let (status, preview) = call(
        &state,
        post_json("/capabilities/od_matrix/sql-preview", &with),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    let sql = preview["sql"].as_str().unwrap_or_default();
    assert!(
        sql.contains("pgr_dijkstraCost(") && sql.contains("reverse_cost"),
        "{preview}"
    );
    // Allocation too: pgRouting's searches, the documented tie rule applied after.
    let allocation = json!({"engine": "postgis", "catalog": catalog,
        "params": {"facilities": "input", "facility_id": "name"}});
    let (status, preview) = call(
        &state,
        post_json("/capabilities/network_allocation/sql-preview", &allocation),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    let sql = preview["sql"].as_str().unwrap_or_default();
    assert!(
        sql.contains("pgr_drivingDistance(") && !sql.contains("runs on the native backend"),
        "{preview}"
    );

    for (params, named) in [
        (
            json!({"origins": countries, "origin_id": "nope", "destinations": countries,
            "destination_id": "name"}),
            "origin_id",
        ),
        (
            json!({"origins": countries, "origin_id": "name", "destinations": countries,
            "destination_id": "name", "cost_field": "name"}),
            "cost_field",
        ),
    ] {
        let steps = json!([{"id": "costs", "capability": "od_matrix", "params": params}]);
        let request = json!({"dataset_id": countries, "engine": "embedded",
            "pipeline": {"name": "run", "steps": steps}});
        let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
        assert!(status.is_client_error(), "{status} {body}");
        assert!(body.to_string().contains(named), "{body}");
    }
}

/// The tree of the cities against networkx's over every pair at its geodesic distance (pyproj):
/// the same links and total length on every engine.
const POINT_TREE: &str = r##"
import json, sys, itertools, warnings
import geopandas as gpd, networkx as nx, pyproj
warnings.filterwarnings("ignore")
cases = json.load(open(sys.argv[1]))
cities = gpd.read_file(cases[0]["cities"])
geod = pyproj.Geod(ellps="WGS84")
G = nx.Graph()
points = [(r["name"], r.geometry) for _, r in cities.iterrows() if r.geometry is not None and not r.geometry.is_empty]
for (a, p), (b, q) in itertools.combinations(points, 2):
    G.add_edge(a, b, weight=geod.inv(p.x, p.y, q.x, q.y)[2])
tree = nx.minimum_spanning_tree(G)
want = {frozenset(e) for e in tree.edges()}
total = tree.size(weight="weight")
problems = []
for case in cases:
    ours = gpd.read_file(case["path"])
    got = {frozenset((r["from"], r["to"])) for _, r in ours.iterrows()}
    mine = float(ours.cost.sum())
    lengths = [geod.inv(*r.geometry.coords[0], *r.geometry.coords[1])[2] for _, r in ours.iterrows()]
    if got != want or abs(mine - total) > 1e-9 * total or any(abs(l - c) > 1e-6 for l, c in zip(lengths, ours.cost)):
        problems.append(f"{case['label']}: {len(got ^ want)} links differ, total {mine} vs {total}")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_of_points_equals_networkx_on_every_engine() {
    let (dir, state, _countries) = countries_on_every_engine("network_points").await;
    let files = common::uploads::shapefile("naturalearth_cities");
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let cities = upload(&state, &files).await;
    let [_, cities_path, _] = common::uploads::shared_paths();
    let mut manifest = Vec::new();
    for engine in ENGINES {
        let steps = json!([{"id": "tree", "capability": "mst",
            "params": {"of": "points", "id_field": "name"}}]);
        let path = run(&state, &cities, engine, steps).await;
        manifest.push(json!({"label": engine, "path": path, "cities": cities_path}));
    }
    let list = dir.path().join("trees.json");
    std::fs::write(&list, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(POINT_TREE, &[&list.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));

    // Without the field naming the points, the step is refused, naming the parameter.
    let steps = json!([{"id": "tree", "capability": "mst", "params": {"of": "points"}}]);
    let request = json!({"dataset_id": cities, "engine": "embedded",
        "pipeline": {"name": "run", "steps": steps}});
    let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
    assert!(status.is_client_error(), "{status} {body}");
    assert!(body.to_string().contains("id_field"), "{body}");
}
