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
use common::real::run_python;
use common::uploads::{countries_on_every_engine, run, upload};
use common::{call, post_json};

const ENGINES: [&str; 4] = ["embedded", "postgis", "native", "hybrid"];

/// Checks every case of the manifest `argv[1]` against networkx; prints one line per problem.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, networkx as nx, numpy as np, shapely
warnings.filterwarnings("ignore")
cases = json.load(open(sys.argv[1]))
problems = []

def graph_of(streets, params):
    """(nodes sorted by x then y, edges [(u, v, cost, dir, row)], networkx DiGraph)."""
    cost_field, directed, oneway = params.get("cost_field"), params.get("directed", False), params.get("oneway_field")
    raw = []
    for row, r in streets.iterrows():
        g = r.geometry
        if g is None or g.is_empty:
            continue
        parts = list(g.geoms) if g.geom_type == "MultiLineString" else [g]
        for p in parts:
            c = np.asarray(p.coords)[:, :2]
            cost = p.length if cost_field is None else r[cost_field]
            if cost is None or (isinstance(cost, float) and np.isnan(cost)) or cost < 0:
                continue
            if directed:
                d = 1
            elif oneway is not None and r[oneway] is not None:
                t = str(r[oneway]).strip().lower()
                d = 1 if t in ("1", "true", "yes") else (-1 if t in ("-1", "reverse") else 0)
            else:
                d = 0
            raw.append((tuple(c[0]), tuple(c[-1]), float(cost), d, row, p))
    nodes = sorted({e[0] for e in raw} | {e[1] for e in raw})
    number = {n: i for i, n in enumerate(nodes)}
    edges = [(number[a], number[b], c, d, row, p) for a, b, c, d, row, p in raw]
    G = nx.DiGraph()
    G.add_nodes_from(range(len(nodes)))
    def arc(u, v, c):
        if not G.has_edge(u, v) or G[u][v]["weight"] > c:
            G.add_edge(u, v, weight=c)
    for u, v, c, d, _, _ in edges:
        if d >= 0: arc(u, v, c)
        if d <= 0: arc(v, u, c)
    return np.asarray(nodes), edges, G

def place(nodes, frame):
    """Each row's nearest node (squared planar distance, ties to the lower number) or None."""
    out = []
    for g in frame.geometry:
        if g is None or g.is_empty:
            out.append(None)
            continue
        p = g if g.geom_type == "Point" else g.centroid
        d = (nodes[:, 0] - p.x) * (nodes[:, 0] - p.x) + (nodes[:, 1] - p.y) * (nodes[:, 1] - p.y)
        out.append(int(np.argmin(d)))
    return out

def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))

def null(v):
    return v is None or (isinstance(v, float) and np.isnan(v))

def reach(edges, dist):
    """Each edge's least cost to travel it end to end, or None."""
    out = []
    for u, v, c, d, _, _ in edges:
        options = []
        if d >= 0 and u in dist: options.append(dist[u] + c)
        if d <= 0 and v in dist: options.append(dist[v] + c)
        out.append(min(options) if options else None)
    return out

streets = gpd.read_file(cases[0]["streets"])
graphs = {}
def graph_for(p):
    key = (p.get("cost_field"), p.get("directed", False), p.get("oneway_field"))
    if key not in graphs:
        graphs[key] = graph_of(streets, p)
    return graphs[key]
searches = {}
def lengths_from(key, G, node):
    """networkx's least costs from `node` (cached per graph)."""
    if (key, node) not in searches:
        searches[(key, node)] = nx.single_source_dijkstra_path_length(G, node)
    return searches[(key, node)]

for case in cases:
    label, kind, p = case["label"], case["kind"], case["params"]
    nodes, edges, G = graph_for(p)
    gkey = (p.get("cost_field"), p.get("directed", False), p.get("oneway_field"))
    ours = gpd.read_file(case["path"])
    bad = []
    if kind in ("od_matrix", "shortest_path"):
        origins, destinations = gpd.read_file(case["origins"]), gpd.read_file(case["destinations"])
        on, dn = place(nodes, origins), place(nodes, destinations)
        if len(ours) != len(origins) * len(destinations):
            bad.append(f"{len(ours)} rows for {len(origins)} x {len(destinations)}")
        mine = {(int(r.origin), int(r.destination)): r for _, r in ours.iterrows()}
        lengths = {}
        for oi, o in enumerate(origins.id):
            if on[oi] is not None and on[oi] not in lengths:
                lengths[on[oi]] = lengths_from(gkey, G, on[oi])
            for di, d in enumerate(destinations.id):
                r = mine.get((int(o), int(d)))
                if r is None:
                    bad.append(f"pair {o},{d} missing"); continue
                want = None if on[oi] is None or dn[di] is None else lengths[on[oi]].get(dn[di])
                if null(r.cost) != (want is None) or (want is not None and not close(r.cost, want)):
                    bad.append(f"{o}->{d}: {r.cost} vs {want}")
                if kind == "shortest_path" and want is not None and want > 0:
                    if r.geometry is None or not close(r.geometry.length, want) or int(r.edges) != len(r.geometry.geoms):
                        bad.append(f"{o}->{d}: path of length {None if r.geometry is None else r.geometry.length}, {r.edges} edges, cost {want}")
                    else:
                        ends = [(tuple(np.asarray(l.coords)[0]), tuple(np.asarray(l.coords)[-1])) for l in r.geometry.geoms]
                        at = tuple(nodes[on[oi]])
                        for a, b in ends:
                            if at == a: at = b
                            elif at == b: at = a
                            else:
                                bad.append(f"{o}->{d}: the path breaks"); break
                        if at != tuple(nodes[dn[di]]):
                            bad.append(f"{o}->{d}: the path ends elsewhere")
    elif kind == "isochrone":
        origins = gpd.read_file(case["origins"])
        on = place(nodes, origins)
        bands = p["bands"]
        by_wkb = {shapely.to_wkb(e[5]): i for i, e in enumerate(edges)}
        for oi, o in enumerate(origins.id):
            mine = ours[ours.origin == o]
            if on[oi] is None:
                if len(mine): bad.append(f"origin {o} without a geometry reached {len(mine)}")
                continue
            r = reach(edges, lengths_from(gkey, G, on[oi]))
            want = {i: (c, next(k for k, b in enumerate(bands) if c <= b) + 1)
                    for i, c in enumerate(r) if c is not None and c <= bands[-1]}
            if p.get("output") == "polygons":
                for k, b in enumerate(bands):
                    inside = [edges[i][5] for i, (c, band) in want.items() if band <= k + 1]
                    row = mine[mine.band == k + 1]
                    if not inside:
                        if len(row): bad.append(f"origin {o} band {k+1}: a polygon where nothing is reached")
                        continue
                    hull = shapely.MultiLineString(inside).convex_hull
                    if len(row) != 1 or not close(row.geometry.iloc[0].area, hull.area):
                        bad.append(f"origin {o} band {k+1}: {list(row.geometry.area)} vs {hull.area}")
            else:
                got = {}
                for _, row in mine.iterrows():
                    i = by_wkb.get(shapely.to_wkb(row.geometry))
                    got[i] = (row.cost, int(row.band))
                if set(got) != set(want):
                    bad.append(f"origin {o}: {len(got)} edges vs {len(want)}, {sorted(set(got) ^ set(want), key=str)[:4]}")
                else:
                    bad += [f"origin {o} edge {i}: {got[i]} vs {want[i]}" for i in want
                            if not close(got[i][0], want[i][0]) or got[i][1] != want[i][1]][:3]
    elif kind == "network_allocation":
        facilities = gpd.read_file(case["facilities"])
        fn = place(nodes, facilities)
        per = {}
        for fi, f in enumerate(facilities.id):
            if fn[fi] is not None:
                per[int(f)] = reach(edges, lengths_from(gkey, G, fn[fi]))
        best, parts_of = {}, {}
        for i, e in enumerate(edges):
            parts_of.setdefault(e[4], []).append(i)
            costs = [c[i] for c in per.values() if c[i] is not None]
            if costs:
                row = e[4]
                best[row] = min(best.get(row, float("inf")), min(costs))
        for row, r in ours.sort_values("id").reset_index(drop=True).iterrows():
            want = best.get(row)
            if null(r.cost) != (want is None) or (want is not None and not close(r.cost, want)):
                bad.append(f"street {r.id}: cost {r.cost} vs {want}")
            elif want is not None:
                parts = parts_of.get(row, [])
                if not any(per[int(r.facility)][i] is not None and close(per[int(r.facility)][i], want) for i in parts):
                    bad.append(f"street {r.id}: facility {r.facility} does not reach it at {want}")
    elif kind == "connectivity_check":
        U = nx.Graph()
        U.add_nodes_from(range(len(nodes)))
        U.add_edges_from((e[0], e[1]) for e in edges)
        parts = [c for c in nx.connected_components(U) if any(True for _ in U.edges(c))]
        component_of = {}
        stats = []
        for c in parts:
            count = sum(1 for e in edges if e[0] in c)
            stats.append((-count, min(c), c))
        stats.sort(key=lambda s: (s[0], s[1]))
        for k, (neg, _, c) in enumerate(stats):
            for n in c: component_of[n] = (k + 1, -neg)
        want = {}
        for e in edges:
            k = component_of[e[0]]
            want[e[4]] = min(want.get(e[4], k), k)
        for row, r in ours.sort_values("id").reset_index(drop=True).iterrows():
            w = want.get(row)
            got = None if null(r.component) else (int(r.component), int(r.component_edges))
            if got != w or (w is not None and bool(r.isolated) != (w[0] != 1)):
                bad.append(f"street {r.id}: {got} {r.isolated} vs {w}")
        if len(stats) < 2:
            bad.append(f"the reference found {len(stats)} components")
    elif kind == "mst":
        U = nx.Graph()
        for u, v, c, _, _, _ in edges:
            if not U.has_edge(u, v) or U[u][v]["weight"] > c:
                U.add_edge(u, v, weight=c)
        full = nx.minimum_spanning_tree(U).size(weight="weight")
        kept_ids = set(int(i) for i in ours.id)
        K = nx.Graph()
        for u, v, c, _, row, _ in edges:
            if int(streets.id.iloc[row]) in kept_ids and (not K.has_edge(u, v) or K[u][v]["weight"] > c):
                K.add_edge(u, v, weight=c)
        sub = nx.minimum_spanning_tree(K).size(weight="weight")
        if not close(sub, full) or nx.number_connected_components(K) != nx.number_connected_components(U.subgraph(K.nodes)) or K.number_of_nodes() != U.number_of_nodes():
            bad.append(f"forest weight {sub} vs {full}, {K.number_of_nodes()} of {U.number_of_nodes()} nodes")
        if len(ours) > U.number_of_nodes():
            bad.append(f"{len(ours)} lines kept for {U.number_of_nodes()} nodes")
    if bad:
        problems.append(f"{label}: {len(bad)} differences, first {bad[:3]}"[:700])
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

/// Uploads one generated file; answers its dataset id.
async fn upload_file(state: &geomill::state::AppState, path: &std::path::Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    upload(state, &[(&name, std::fs::read(path).unwrap())]).await
}

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
    let mut manifest = Vec::new();
    for (capability, params) in &cases {
        for engine in ENGINES {
            let steps = json!([{"id": "n", "capability": capability, "params": params}]);
            let path = run(&state, &streets, engine, steps).await;
            manifest.push(json!({"label": format!("{engine} {capability} {params}"),
                "kind": capability, "params": params, "path": path,
                "streets": streets_path, "origins": file("origins.gpkg"),
                "destinations": file("destinations.gpkg"),
                "facilities": file("destinations.gpkg")}));
        }
    }
    let list = dir.path().join("network.json");
    std::fs::write(&list, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&list.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
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
