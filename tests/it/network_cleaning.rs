//! Line network cleaning against Shapely 2: a hand-made GeoJSON layer (undershoots, a near
//! miss, crossings, a collinear overlap, pseudo nodes, a reversed duplicate, a MultiLineString,
//! a point, a polygon and a NULL geometry) and a generated street grid
//! (`benches/street_network.py`, seeded: undershoots, near misses, pseudo nodes, reversed
//! copies, long avenues and diagonals, a NULL and an empty geometry), both uploaded and cleaned
//! through `/api/pipelines/execute` on the embedded, PostGIS, native and hybrid engines, each
//! result compared feature by feature with an answer computed from the source file in Python:
//! `network_node_lines` with `shapely.union_all`'s pieces, `network_remove_pseudo_nodes` with
//! `shapely.line_merge`, `network_remove_duplicates` with `shapely.normalize` and
//! `set_precision`, `network_snap_endpoints` and `network_extend_dangles` with the documented
//! rule written again over Shapely's distances, nearest points and intersections. Counts are
//! exact, total lengths within 1e-9 (relative), geometries within 1e-9 of the layer's extent by
//! Hausdorff distance.

use serde_json::{Value, json};

use crate::common;
use common::pipeline::{ENGINES, step};
use common::real::run_python;
use common::uploads::{countries_on_every_engine, run, upload};

/// Writes the hand-made layer (GeoJSON) and the generated streets (GeoPackage) into argv[1].
const WRITE: &str = r##"
import os, subprocess, sys
import geopandas as gpd
from shapely import wkt
rows = [
    ("a", "road", "LINESTRING (0 0, 10 0)"),
    ("b", "road", "LINESTRING (10 0, 20 0)"),
    ("c", "road", "LINESTRING (20 0, 20 10)"),
    ("d", "path", "LINESTRING (5 -5, 5 5)"),
    ("e", "path", "LINESTRING (15 8, 15 0.4)"),
    ("f", "road", "LINESTRING (20.2 10.1, 30 10)"),
    ("g", "copy", "LINESTRING (20 0, 10 0)"),
    ("h", "road", "MULTILINESTRING ((40 0, 45 0), (45 0, 50 5))"),
    ("i", "path", "LINESTRING (2 0, 7 0)"),
    ("j", "road", "LINESTRING (30 10, 30 20, 40 20)"),
    ("k", None, "LINESTRING (40 20, 40 30)"),
    ("l", "road", "LINESTRING (-0.3 -8, -0.3 -0.6)"),
    ("p", "point", "POINT (1 1)"),
    ("q", "area", "POLYGON ((60 0, 61 0, 61 1, 60 0))"),
    ("n", "nothing", None),
]
frame = gpd.GeoDataFrame(
    [{"name": n, "kind": k, "geometry": wkt.loads(g) if g else None} for n, k, g in rows],
    geometry="geometry", crs="EPSG:4326")
frame.to_file(os.path.join(sys.argv[1], "hand.geojson"), driver="GeoJSON")
subprocess.run([sys.executable, "benches/street_network.py",
                os.path.join(sys.argv[1], "streets.gpkg")], check=True)
"##;

/// Compares each case with its reference; prints one line per case that differs.
const COMPARE: &str = r##"
import json, math, sys, warnings
from collections import Counter
import geopandas as gpd, numpy as np, shapely
from shapely.geometry import LineString, MultiLineString, Point
warnings.filterwarnings("ignore")

def present(g):
    return g is not None and not g.is_empty

def lines_of(g):
    if not present(g) or g.geom_type not in ("LineString", "MultiLineString"):
        return None
    return [list(p.coords) for p in shapely.get_parts(g)]

def rebuild(g, parts):
    if g.geom_type == "LineString":
        return LineString(parts[0])
    return MultiLineString(parts)

def extent(geoms):
    b = shapely.total_bounds(np.array([g for g in geoms if present(g)], dtype=object))
    return max(b[2] - b[0], b[3] - b[1], 1.0)

def same(a, b, eps):
    if not present(a) or not present(b):
        return present(a) == present(b)
    if a.geom_type != b.geom_type and {a.geom_type, b.geom_type} != {"LineString", "MultiLineString"}:
        return False
    return (shapely.hausdorff_distance(a, b) <= eps
            and abs(a.length - b.length) <= 1e-9 * max(a.length, b.length) + eps)

def order_key(row, columns, order_by=()):
    def value(v):
        null = v is None or (isinstance(v, float) and math.isnan(v))
        return (null, 0 if null else v)
    g = row["geometry"]
    return (tuple(value(row[c]) for c in order_by)
            + (shapely.to_wkb(g) if g is not None else b"",)
            + tuple(value(row[c]) for c in columns if c not in order_by))

def node_lines(src, key):
    line = [present(g) and g.geom_type in ("LineString", "MultiLineString") and g.length > 0
            for g in src.geometry]
    geoms = [g for g, l in zip(src.geometry, line) if l]
    eps = 1e-9 * extent(geoms)
    pieces = list(shapely.get_parts(shapely.union_all(geoms)))
    middles = shapely.STRtree([p.interpolate(0.5, normalized=True) for p in pieces])
    out = {}
    for k, g, l in zip(src[key], src.geometry, line):
        out[k] = ([pieces[i] for i in middles.query(g, predicate="dwithin", distance=eps)]
                  if l else [g])
    return out

def remove_duplicates(src, key, p):
    tol, order_by = p.get("tolerance", 0), p.get("order_by", [])
    columns = [c for c in src.columns if c != "geometry"]
    groups, kept = {}, []
    for i, g in enumerate(src.geometry):
        if not (present(g) and g.geom_type in ("LineString", "MultiLineString") and g.length > 0):
            kept.append(i)
            continue
        r = shapely.set_precision(g, tol) if tol > 0 else g
        if r.is_empty:
            kept.append(i)
            continue
        groups.setdefault(shapely.to_wkb(shapely.normalize(r)), []).append(i)
    for members in groups.values():
        kept.append(min(members, key=lambda i: order_key(src.iloc[i], columns, order_by)))
    return {src[key].iloc[i]: [src.geometry.iloc[i]] for i in kept}

def snap(src, key, p):
    tol, target = p["tolerance"], p.get("target", "endpoints")
    parts = [lines_of(g) for g in src.geometry]
    ends = sorted((c[0], c[1], i, n, last) for i, ps in enumerate(parts) if ps
                  for n, part in enumerate(ps) for last, c in ((False, part[0]), (True, part[-1])))
    kept, moved = [], [None if ps is None else [list(map(list, q)) for q in ps] for ps in parts]
    for x, y, i, n, last in ends:
        near = [k for k in kept if math.hypot(k[0] - x, k[1] - y) <= tol]
        here = [k for k in near if (k[0], k[1]) == (x, y)]
        if here:
            here[0][2].add(i)
            continue
        options = [k for k in near if i not in k[2]]
        at = None
        if options:
            best = min(options, key=lambda k: (math.hypot(k[0] - x, k[1] - y), k[0], k[1]))
            best[2].add(i)
            at = best[:2]
        elif target == "lines":
            point, found = Point(x, y), []
            for j, g in enumerate(src.geometry):
                if j != i and parts[j] and point.distance(g) <= tol:
                    q = shapely.shortest_line(point, g).coords[1]
                    found.append((point.distance(g), q[0], q[1]))
            if found:
                _, qx, qy = min(found)
                at = [qx, qy]
            kept.append([*(at or [x, y]), {i}])
        else:
            kept.append([x, y, {i}])
        if at is not None:
            v = moved[i][n][-1 if last else 0]
            v[0], v[1] = at[0], at[1]
    return {k: [rebuild(g, moved[i]) if moved[i] else g]
            for i, (k, g) in enumerate(zip(src[key], src.geometry))}

def extend(src, key, p):
    reach = p["max_distance"]
    parts = [lines_of(g) for g in src.geometry]
    count = Counter((c[0], c[1]) for ps in parts if ps for q in ps for c in (q[0], q[-1]))
    out = {}
    for i, (k, g) in enumerate(zip(src[key], src.geometry)):
        if not parts[i]:
            out[k] = [g]
            continue
        new = [list(map(list, q)) for q in parts[i]]
        for n, q in enumerate(parts[i]):
            for first in (True, False):
                walk = q if first else q[::-1]
                end = walk[0]
                if count[(end[0], end[1])] != 1:
                    continue
                others = [h for j, h in enumerate(src.geometry) if j != i and parts[j]]
                point = Point(end[0], end[1])
                if any(point.intersects(h) for h in others):
                    continue
                before = next((v for v in walk[1:] if (v[0], v[1]) != (end[0], end[1])), None)
                if before is None:
                    continue
                dx, dy = end[0] - before[0], end[1] - before[1]
                length = math.hypot(dx, dy)
                ray = LineString([end[:2], (end[0] + dx / length * reach, end[1] + dy / length * reach)])
                found = []
                for h in others:
                    meet = ray.intersection(h)
                    if present(meet):
                        q2 = shapely.shortest_line(point, meet).coords[1]
                        found.append((point.distance(meet), q2[0], q2[1]))
                if found:
                    _, x, y = min(found)
                    v = new[n][0 if first else -1]
                    v[0], v[1] = x, y
        out[k] = [rebuild(g, new)]
    return out

def pseudo(src, key, p):
    fields = p.get("fields", [])
    columns = [c for c in src.columns if c != "geometry"]
    parts = [lines_of(g) for g in src.geometry]
    single = {i for i, g in enumerate(src.geometry) if parts[i] and g.geom_type == "LineString"}
    at = {}
    for i, ps in enumerate(parts):
        for q in ps or []:
            at.setdefault(tuple(q[0][:2]), []).append(i)
            at.setdefault(tuple(q[-1][:2]), []).append(i)
    value = lambda i: tuple(None if src[f].iloc[i] is None or (isinstance(src[f].iloc[i], float) and math.isnan(src[f].iloc[i])) else src[f].iloc[i] for f in fields)
    group = {i: i for i in range(len(src))}
    def find(i):
        while group[i] != i:
            i = group[i]
        return i
    for rows in at.values():
        if len(rows) == 2 and rows[0] != rows[1] and set(rows) <= single and value(rows[0]) == value(rows[1]):
            group[find(rows[0])] = find(rows[1])
    members = {}
    for i in range(len(src)):
        members.setdefault(find(i), []).append(i)
    low = lambda i: (src.geometry.iloc[i].bounds[0], src.geometry.iloc[i].bounds[1])
    out = {}
    for rows in members.values():
        if len(rows) == 1:
            out[src[key].iloc[rows[0]]] = [src.geometry.iloc[rows[0]]]
            continue
        first = min(rows, key=lambda i: (low(i), order_key(src.iloc[i], columns)))
        merged = shapely.line_merge(MultiLineString([src.geometry.iloc[i] for i in rows]))
        out[src[key].iloc[first]] = [merged]
    if not fields and all(parts[i] is None or i in single for i in range(len(src))):
        whole = shapely.line_merge(MultiLineString([src.geometry.iloc[i] for i in sorted(single)]))
        pieces = len(shapely.get_parts(whole))
        mine = sum(1 for k, gs in out.items() if present(gs[0]) and gs[0].geom_type == "LineString")
        if pieces != mine:
            out["__line_merge_count"] = [None] * (pieces - mine)
    return out

REFERENCES = {"network_node_lines": lambda s, k, p: node_lines(s, k),
              "network_remove_duplicates": remove_duplicates, "network_snap_endpoints": snap,
              "network_extend_dangles": extend, "network_remove_pseudo_nodes": pseudo}

problems = []
cases = json.load(open(sys.argv[1]))
for case in cases:
    src = gpd.read_file(case["source"])
    ours = gpd.read_file(case["path"])
    key = case["key"]
    expected = REFERENCES[case["capability"]](src, key, case["params"])
    eps = 1e-9 * extent(src.geometry)
    mine = {}
    for k, g in zip(ours[key], ours.geometry):
        mine.setdefault(k, []).append(g)
    label = case["label"]
    if Counter({k: len(v) for k, v in mine.items()}) != Counter({k: len(v) for k, v in expected.items()}):
        counts = [(k, len(mine.get(k, [])), len(expected.get(k, []))) for k in sorted(set(mine) | set(expected), key=str)
                  if len(mine.get(k, [])) != len(expected.get(k, []))][:5]
        problems.append(f"{label}: {len(ours)} rows, expected {sum(map(len, expected.values()))}; counts differ {counts}")
        continue
    bad = []
    for k, want in expected.items():
        left = list(mine[k])
        for w in want:
            match = next((n for n, g in enumerate(left) if same(g, w, eps)), None)
            if match is None:
                bad.append(k)
                break
            left.pop(match)
    total = lambda gs: sum(g.length for v in gs.values() for g in v if present(g))
    if abs(total(mine) - total(expected)) > 1e-9 * max(total(expected), 1e-300):
        bad.append(f"total length {total(mine)} vs {total(expected)}")
    if bad:
        problems.append(f"{label}: {len(bad)} features differ, first {bad[:3]}")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_cleaning_equals_shapely_on_every_engine() {
    let (dir, state, _) = countries_on_every_engine("network_cleaning").await;
    let folder = dir.path().display().to_string();
    run_python(WRITE, &[&folder]);
    let hand_path = dir.path().join("hand.geojson");
    let streets_path = dir.path().join("streets.gpkg");
    let hand = upload(
        &state,
        &[("hand.geojson", std::fs::read(&hand_path).unwrap())],
    )
    .await;
    let streets = upload(
        &state,
        &[("streets.gpkg", std::fs::read(&streets_path).unwrap())],
    )
    .await;
    let layers = [
        (&hand, hand_path.display().to_string(), "name"),
        (&streets, streets_path.display().to_string(), "sid"),
    ];
    let cases: Vec<(usize, &str, Value)> = vec![
        (0, "network_node_lines", json!({})),
        (1, "network_node_lines", json!({})),
        (0, "network_remove_duplicates", json!({})),
        (
            1,
            "network_remove_duplicates",
            json!({"order_by": ["kind"]}),
        ),
        (1, "network_remove_duplicates", json!({"tolerance": 1.0})),
        (0, "network_snap_endpoints", json!({"tolerance": 0.5})),
        (
            0,
            "network_snap_endpoints",
            json!({"tolerance": 0.5, "target": "lines"}),
        ),
        (1, "network_snap_endpoints", json!({"tolerance": 1.5})),
        (
            1,
            "network_snap_endpoints",
            json!({"tolerance": 1.5, "target": "lines"}),
        ),
        (0, "network_extend_dangles", json!({"max_distance": 1.0})),
        (1, "network_extend_dangles", json!({"max_distance": 8.0})),
        (0, "network_remove_pseudo_nodes", json!({})),
        (
            0,
            "network_remove_pseudo_nodes",
            json!({"fields": ["kind"]}),
        ),
        (1, "network_remove_pseudo_nodes", json!({})),
        (
            1,
            "network_remove_pseudo_nodes",
            json!({"fields": ["kind"]}),
        ),
    ];
    let mut manifest = Vec::new();
    for (layer, capability, params) in cases {
        let (dataset, source, key) = &layers[layer];
        for engine in ENGINES {
            let path = run(&state, dataset, engine, step(capability, &params)).await;
            manifest.push(
                json!({"label": format!("{engine} {capability} {params} on {key}"),
                "path": path, "capability": capability, "params": params, "source": source,
                "key": key}),
            );
        }
    }
    let file = dir.path().join("network_cases.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_tolerances_must_be_positive() {
    let (_dir, state, countries) = countries_on_every_engine("network_refused").await;
    for (capability, params, word) in [
        (
            "network_snap_endpoints",
            json!({"tolerance": 0}),
            "tolerance",
        ),
        (
            "network_extend_dangles",
            json!({"max_distance": -1}),
            "max_distance",
        ),
        (
            "network_remove_duplicates",
            json!({"tolerance": -1}),
            "tolerance",
        ),
        (
            "network_remove_pseudo_nodes",
            json!({"fields": ["nope"]}),
            "nope",
        ),
    ] {
        let request = json!({"dataset_id": countries, "engine": "embedded",
            "pipeline": {"name": "run", "steps": step(capability, &params)}});
        let (status, body) = common::call(
            &state,
            common::post_json("/api/pipelines/execute", &request),
        )
        .await;
        assert_eq!(status.as_u16(), 422, "{capability}: {body}");
        assert!(body.to_string().contains(word), "{capability}: {body}");
    }
}
