//! Polygon cleaning (`polygon_fix_gaps`, `polygon_fix_overlaps`, `polygon_remove_slivers`,
//! `polygon_snap_borders`) against GeoPandas and Shapely 2: hand-made tile layers with known
//! gaps, overlaps, slivers and misaligned borders (NULL, empty and point rows among them),
//! the Natural Earth countries (some enclosed countries removed: gaps; grown: overlaps;
//! shrunk: borders apart) and the NYC boroughs, uploaded and run through
//! `/api/pipelines/execute` on the embedded, PostGIS, native and hybrid engines. Every result
//! is valid; every feature equals the documented rule recomputed in Shapely (within 1e-6 of
//! its area by symmetric difference); NULL, empty and point rows come back unchanged; and the
//! promises hold independently: no overlap left (GeoPandas overlay), no hole of the union at
//! or under the threshold left, the union unchanged by overlaps and slivers, the area added by
//! gaps equal to the gaps' area.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common;
use common::pipeline::{ENGINES, step};
use common::real::run_python;
use common::uploads::{countries_on_every_engine, run, shared_paths, upload};
use common::{call, post_json};

/// Writes the test layers into the folder named by the first argument (the countries' path
/// second): `tiles_gaps.gpkg`, `tiles_slivers.gpkg`, `squares.gpkg`, `tiles_jitter.gpkg`
/// (EPSG:32631, 100 m tiles) and `countries_holes.geojson`, `countries_grown.gpkg`,
/// `countries_shrunk.gpkg`, `boroughs_grown.gpkg`. Shapely's buffers of the countries and the
/// boroughs (most of its time) are computed once per input (`reference_cache`).
const GENERATE: &str = r##"
import os, sys, warnings
import geopandas as gpd, numpy as np, shapely
from shapely.geometry import Point, Polygon, box
from reference_cache import remembered
warnings.filterwarnings("ignore")
out, countries_path, boroughs_path = sys.argv[1], sys.argv[2], sys.argv[3]
rng = np.random.default_rng(20261126)
X0, Y0, S = 500000, 5000000, 100

def tile(i, j, shrink=0):
    return box(X0 + i * S + shrink, Y0 + j * S + shrink, X0 + (i + 1) * S - shrink, Y0 + (j + 1) * S - shrink)

def write(rows, name, crs="EPSG:32631"):
    ids = [r[0] for r in rows]
    fields = {"key": ids, "label": [f"f{i}" for i in ids]}
    if any(len(r) > 2 for r in rows):
        fields["rank"] = [r[2] for r in rows]
    frame = gpd.GeoDataFrame(fields, geometry=gpd.GeoSeries([r[1] for r in rows], crs=crs))
    path = os.path.join(out, name)
    frame.to_file(path, driver="GPKG", engine="pyogrio", promote_to_multi=False, geometry_type="Unknown")

def buffered(series, distance):
    """`series.buffer(distance, quad_segs=2)`, the buffers kept by `reference_cache`."""
    geoms = remembered("buffer", lambda: np.asarray(series.buffer(distance, quad_segs=2).values),
                       series, distance)
    return gpd.GeoSeries(geoms, index=series.index, crs=series.crs)

odd = [(9001, None), (9002, shapely.from_wkt("POLYGON EMPTY")), (9003, Point(X0 - 500, Y0 - 500))]

# Gaps: one tile missing (four equal borders: the earliest row wins), a 2x2 block missing
# (too large), a tile shrunk by 2 m (its ring goes back to it), a notch cut into a corner.
rows, n = [], 1
for j in range(8):
    for i in range(8):
        if (i, j) == (2, 2) or (i in (5, 6) and j in (5, 6)):
            continue
        g = tile(i, j, 2 if (i, j) == (1, 5) else 0)
        if (i, j) == (6, 1):
            g = g.difference(box(X0 + 7 * S - 7, Y0 + 2 * S - 4, X0 + 7 * S, Y0 + 2 * S))
        rows.append((n, g))
        n += 1
write(rows + odd, "tiles_gaps.gpkg")

# Slivers: a 3 m strip split off a tile (equal borders both sides), a strip on the grid's edge,
# a small square (small, not thin), a strip far away (isolated).
rows, n = [], 1
for j in range(6):
    for i in range(6):
        g = tile(i, j)
        if (i, j) == (1, 1):
            rows.append((n, box(X0 + S, Y0 + S, X0 + 2 * S - 3, Y0 + 2 * S))); n += 1
            g = box(X0 + 2 * S - 3, Y0 + S, X0 + 2 * S, Y0 + 2 * S)
        if (i, j) == (5, 3):
            rows.append((n, box(X0 + 5 * S, Y0 + 3 * S, X0 + 6 * S - 2, Y0 + 4 * S))); n += 1
            g = box(X0 + 6 * S - 2, Y0 + 3 * S, X0 + 6 * S, Y0 + 4 * S)
        if (i, j) == (3, 4):
            rows.append((n, tile(i, j).difference(box(X0 + 3 * S, Y0 + 4 * S, X0 + 3 * S + 10, Y0 + 4 * S + 10)))); n += 1
            g = box(X0 + 3 * S, Y0 + 4 * S, X0 + 3 * S + 10, Y0 + 4 * S + 10)
        rows.append((n, g)); n += 1
rows.append((n, box(X0 + 2000, Y0, X0 + 2003, Y0 + 100)))
write(rows + odd, "tiles_slivers.gpkg")

# Overlaps: squares overlapping in pairs and threes, one inside another, one apart; `rank`
# with a NULL for `first`.
squares = [(1, box(0, 0, 100, 100), 3), (2, box(50, 0, 150, 100), 1), (3, box(25, 50, 75, 150), None),
           (4, box(10, 10, 20, 20), 2), (5, box(300, 0, 400, 100), 5), (6, box(140, 90, 200, 160), 1)]
rows = [(i, shapely.affinity.translate(g, X0, Y0), r) for i, g, r in squares]
write(rows + [(9001, None, 7), (9002, shapely.from_wkt("POLYGON EMPTY"), 0)], "squares.gpkg")

# Misaligned borders: every tile corner (and edge midpoint) moved by up to 0.8 m, each tile
# on its own, so neighbours no longer share their borders.
rows, n = [], 1
for j in range(6):
    for i in range(6):
        x0, y0 = X0 + i * S, Y0 + j * S
        ring = [(x0, y0), (x0 + S / 2, y0), (x0 + S, y0), (x0 + S, y0 + S / 2), (x0 + S, y0 + S),
                (x0 + S / 2, y0 + S), (x0, y0 + S), (x0, y0 + S / 2)]
        ring = [(x + rng.uniform(-0.8, 0.8), y + rng.uniform(-0.8, 0.8)) for x, y in ring]
        rows.append((n, Polygon(ring))); n += 1
write(rows + odd, "tiles_jitter.gpkg")

countries = gpd.read_file(countries_path)
keep = ~countries["name"].isin(["Luxembourg", "Lesotho", "eSwatini", "Czechia", "Switzerland"])
holes = countries[keep].reset_index(drop=True)
holes.insert(0, "key", range(1, len(holes) + 1))
holes.to_file(os.path.join(out, "countries_holes.geojson"), driver="GeoJSON", engine="pyogrio")
grown = countries[["name", "pop_est", "geometry"]].copy()
grown.insert(0, "key", range(1, len(grown) + 1))
grown["geometry"] = buffered(grown.geometry, 0.2)
grown.to_file(os.path.join(out, "countries_grown.gpkg"), driver="GPKG", engine="pyogrio")
shrunk = grown.copy()
shrunk["geometry"] = buffered(countries.geometry, -0.01).values
shrunk = shrunk[~shrunk.is_empty]
shrunk.to_file(os.path.join(out, "countries_shrunk.gpkg"), driver="GPKG", engine="pyogrio")
boroughs = gpd.read_file(boroughs_path)
boroughs.insert(0, "key", range(1, len(boroughs) + 1))
boroughs["geometry"] = buffered(boroughs.geometry, 800)
boroughs.to_file(os.path.join(out, "boroughs_grown.gpkg"), driver="GPKG", engine="pyogrio")
"##;

/// Recomputes each case's rule in Shapely and checks its promises; one line per problem. The
/// rule's answers are computed once per input (`reference_cache`), for every engine's result.
const COMPARE: &str = r##"
import json, sys, warnings, math
import geopandas as gpd, numpy as np, shapely
from shapely.geometry import Polygon, GeometryCollection
from reference_cache import read_layer as read, remembered
warnings.filterwarnings("ignore")
problems, cases = [], json.load(open(sys.argv[1]))
def polygonal(g):
    parts = [p for p in shapely.get_parts(g) if p.geom_type in ("Polygon", "MultiPolygon")]
    parts = [q for p in parts for q in shapely.get_parts(p) if not q.is_empty]
    return shapely.MultiPolygon(parts) if len(parts) > 1 else (parts[0] if parts else Polygon())

def taking_part(g):
    if g is None or g.is_empty or g.geom_type not in ("Polygon", "MultiPolygon"):
        return None
    return g if g.is_valid else polygonal(shapely.make_valid(g))

def union(gs):
    return polygonal(shapely.union_all(gs))

def border(a, b):
    return a.boundary.intersection(b).length

def longest(piece, geoms, allowed):
    best, length = None, 0.0
    for i, g in enumerate(geoms):
        if g is None or not allowed(i):
            continue
        l = border(piece, g)
        if l > 0 and l > length:
            best, length = i, l
    return best

def gaps_of(geoms):
    u = union([g for g in geoms if g is not None])
    out = []
    for p in shapely.get_parts(u):
        for r in p.interiors:
            gap = polygonal(Polygon(r).difference(u))
            if not gap.is_empty:
                out.append(gap)
    return out

def fix_gaps(geoms, p):
    out, given = list(geoms), {}
    for gap in gaps_of(geoms):
        if gap.area <= p["max_area"]:
            owner = longest(gap, geoms, lambda i: True)
            if owner is not None:
                given.setdefault(owner, []).append(gap)
    for i, pieces in given.items():
        out[i] = union([geoms[i]] + pieces)
    return out, [True] * len(geoms)

def fix_overlaps(geoms, p, frame):
    rows = [i for i, g in enumerate(geoms) if g is not None]
    owner = p.get("owner", "largest")
    if owner == "largest":
        rows.sort(key=lambda i: (-geoms[i].area, i))
    elif owner == "smallest":
        rows.sort(key=lambda i: (geoms[i].area, i))
    elif p.get("order_by"):
        values = frame[p["order_by"]].tolist()
        missing = lambda v: v is None or (isinstance(v, float) and math.isnan(v))
        rows.sort(key=lambda i: (missing(values[i]), 0 if missing(values[i]) else values[i], i))
    rank = {r: k for k, r in enumerate(rows)}
    out = list(geoms)
    for i in rows:
        above = [geoms[j] for j in rows[:rank[i]] if geoms[i].intersects(geoms[j]) and not geoms[i].touches(geoms[j])]
        if above:
            out[i] = polygonal(geoms[i].difference(union(above)))
    return out, [True] * len(geoms)

def remove_slivers(geoms, p):
    def is_sliver(g):
        if g is None:
            return False
        small = g.area < p["max_area"] if "max_area" in p else True
        thin = (4 * math.pi * g.area / g.length ** 2 < p["max_thinness"]) if "max_thinness" in p else True
        return small and thin
    sliver = [is_sliver(g) for g in geoms]
    out, keep, given = list(geoms), [True] * len(geoms), {}
    for i, g in enumerate(geoms):
        if not sliver[i]:
            continue
        owner = longest(g, geoms, lambda k: not sliver[k])
        if owner is None:
            keep[i] = p.get("keep_isolated", True)
        else:
            keep[i] = False
            given.setdefault(owner, []).append(g)
    for i, pieces in given.items():
        out[i] = union([geoms[i]] + pieces)
    return out, keep

def snap_borders(geoms, p):
    tol, out, snapped = p["tolerance"], list(geoms), [None] * len(geoms)
    for i, g in enumerate(geoms):
        if g is None:
            continue
        refs = [snapped[j] for j in range(i) if snapped[j] is not None and g.distance(snapped[j]) <= tol]
        if refs:
            moved = shapely.snap(g, GeometryCollection(refs), tol)
            out[i] = polygonal(moved if moved.is_valid else shapely.make_valid(moved))
        snapped[i] = out[i]
    return out, [True] * len(geoms)

def blank(g):
    return g is None or g.is_empty

def same(a, b):
    if blank(a) or blank(b):
        return blank(a) == blank(b)
    scale = max(a.area, b.area, 1e-300)
    return a.symmetric_difference(b).area <= 1e-6 * scale

def rule_answers(source, capability, p):
    """The documented rule recomputed in Shapely on the source's rows: `wanted` ({key: the
    expected geometry} of the rows kept; NULL, empty and point rows unchanged), `before` (the
    union of the polygons taking part), `filled` (the area of the gaps at or under `max_area`,
    for fix_gaps) and `changed` (how many rows the rule changes or removes)."""
    geoms = [taking_part(g) for g in source.geometry]
    if capability == "polygon_fix_gaps":
        expected, keep = fix_gaps(geoms, p)
    elif capability == "polygon_fix_overlaps":
        expected, keep = fix_overlaps(geoms, p, source)
    elif capability == "polygon_remove_slivers":
        expected, keep = remove_slivers(geoms, p)
    else:
        expected, keep = snap_borders(geoms, p)
    ids = source["key"].tolist()
    wanted = {ids[i]: (expected[i] if geoms[i] is not None else source.geometry[i]) for i in range(len(ids)) if keep[i]}
    filled = (sum(g.area for g in gaps_of(geoms) if g.area <= p["max_area"])
              if capability == "polygon_fix_gaps" else None)
    changed = sum(1 for i, g in enumerate(geoms) if not keep[i] or (g is not None and not same(expected[i], g)))
    return {"wanted": wanted, "before": union([g for g in geoms if g is not None]),
            "filled": filled, "changed": changed}

for case in cases:
    label, p, capability = case["label"], case["params"], case["capability"]
    source = read(case["source"])
    ours = gpd.read_file(case["path"])
    answers = remembered("rule", lambda: rule_answers(source, capability, p),
                         capability, p, source)
    wanted, before = answers["wanted"], answers["before"]
    mine = dict(zip(ours["key"].tolist(), ours.geometry))
    if sorted(mine) != sorted(wanted):
        problems.append(f"{label}: ids {sorted(set(mine) ^ set(wanted))[:8]} differ ({len(mine)} rows, reference {len(wanted)})")
        continue
    bad = [k for k in wanted if not same(mine[k], wanted[k])]
    if bad:
        k = bad[0]
        problems.append(f"{label}: {len(bad)} of {len(wanted)} differ, first id {k}: ours {shapely.to_wkt(mine[k], rounding_precision=3)[:160]} reference {shapely.to_wkt(wanted[k], rounding_precision=3)[:160]}")
    polygons = [g for g in mine.values() if not blank(g) and g.geom_type in ("Polygon", "MultiPolygon")]
    invalid = [k for k, g in mine.items() if not blank(g) and not shapely.is_valid(g)]
    if invalid:
        problems.append(f"{label}: invalid results, ids {invalid[:5]}")
    after = union(polygons)
    # The promises, checked on our answer directly.
    if capability == "polygon_fix_overlaps":
        frame = gpd.GeoDataFrame({"id": list(range(len(polygons)))}, geometry=polygons, crs=source.crs)
        pieces = gpd.overlay(frame, frame, how="intersection", keep_geom_type=True)
        pieces = pieces[pieces["id_1"] < pieces["id_2"]]
        if pieces.area.sum() > 1e-9 * before.area:
            problems.append(f"{label}: overlaps left, {pieces.area.sum()}")
        if before.symmetric_difference(after).area > 1e-9 * before.area:
            problems.append(f"{label}: the union changed")
    if capability == "polygon_fix_gaps":
        small = [g.area for g in gaps_of(polygons) if g.area <= p["max_area"]]
        filled = answers["filled"]
        if small:
            problems.append(f"{label}: gaps left {small[:5]}")
        if abs((after.area - before.area) - filled) > 1e-6 * before.area or filled == 0:
            problems.append(f"{label}: area grew by {after.area - before.area}, the gaps {filled}")
    if capability == "polygon_remove_slivers" and p.get("keep_isolated", True):
        if before.symmetric_difference(after).area > 1e-9 * before.area:
            problems.append(f"{label}: the union changed")
    if answers["changed"] == 0:
        problems.append(f"{label}: nothing to clean, the case proves nothing")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleaning_equals_the_rules_recomputed_in_shapely_on_every_engine() {
    let (dir, state, _) = countries_on_every_engine("cleaning").await;
    let [countries_path, _, boroughs_path] = shared_paths();
    let folder = dir.path().display().to_string();
    run_python(GENERATE, &[&folder, &countries_path, &boroughs_path]);
    let mut datasets = std::collections::HashMap::new();
    for name in [
        "tiles_gaps.gpkg",
        "tiles_slivers.gpkg",
        "squares.gpkg",
        "tiles_jitter.gpkg",
        "countries_holes.geojson",
        "countries_grown.gpkg",
        "countries_shrunk.gpkg",
        "boroughs_grown.gpkg",
    ] {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        datasets.insert(name, upload(&state, &[(name, bytes)]).await);
    }
    let cases: Vec<(&str, &str, Value)> = vec![
        (
            "tiles_gaps.gpkg",
            "polygon_fix_gaps",
            json!({"max_area": 15000}),
        ),
        (
            "countries_holes.geojson",
            "polygon_fix_gaps",
            json!({"max_area": 10}),
        ),
        ("squares.gpkg", "polygon_fix_overlaps", json!({})),
        (
            "squares.gpkg",
            "polygon_fix_overlaps",
            json!({"owner": "smallest"}),
        ),
        (
            "squares.gpkg",
            "polygon_fix_overlaps",
            json!({"owner": "first", "order_by": "rank"}),
        ),
        (
            "squares.gpkg",
            "polygon_fix_overlaps",
            json!({"owner": "first"}),
        ),
        ("countries_grown.gpkg", "polygon_fix_overlaps", json!({})),
        (
            "countries_grown.gpkg",
            "polygon_fix_overlaps",
            json!({"owner": "first", "order_by": "name"}),
        ),
        (
            "boroughs_grown.gpkg",
            "polygon_fix_overlaps",
            json!({"owner": "smallest"}),
        ),
        (
            "tiles_slivers.gpkg",
            "polygon_remove_slivers",
            json!({"max_area": 500, "max_thinness": 0.3}),
        ),
        (
            "tiles_slivers.gpkg",
            "polygon_remove_slivers",
            json!({"max_area": 500, "keep_isolated": false}),
        ),
        (
            "countries_holes.geojson",
            "polygon_remove_slivers",
            json!({"max_area": 1.0}),
        ),
        (
            "boroughs_grown.gpkg",
            "polygon_remove_slivers",
            json!({"max_area": 1.4e9}),
        ),
        (
            "tiles_jitter.gpkg",
            "polygon_snap_borders",
            json!({"tolerance": 2.0}),
        ),
        (
            "countries_shrunk.gpkg",
            "polygon_snap_borders",
            json!({"tolerance": 0.05}),
        ),
    ];
    let mut manifest = Vec::new();
    for (file, capability, params) in cases {
        for engine in ENGINES {
            let path = run(&state, &datasets[file], engine, step(capability, &params)).await;
            manifest.push(
                json!({"label": format!("{engine} {capability} {params} on {file}"),
                "path": path, "capability": capability, "params": params,
                "source": dir.path().join(file)}),
            );
        }
    }
    let file = dir.path().join("cleaning.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleaning_parameters_out_of_range_are_refused() {
    let (_dir, state, countries) = countries_on_every_engine("cleaning_refused").await;
    for (capability, params, expected) in [
        (
            "polygon_remove_slivers",
            json!({}),
            "max_area, max_thinness or both",
        ),
        (
            "polygon_remove_slivers",
            json!({"max_thinness": 2}),
            "at most 1",
        ),
        ("polygon_fix_gaps", json!({"max_area": -1}), "above 0"),
        ("polygon_snap_borders", json!({"tolerance": 0}), "above 0"),
        (
            "polygon_fix_overlaps",
            json!({"owner": "largest", "order_by": "name"}),
            "only with owner `first`",
        ),
        (
            "polygon_fix_overlaps",
            json!({"owner": "first", "order_by": "nope"}),
            "unknown column",
        ),
    ] {
        let request = json!({"dataset_id": countries, "engine": "embedded",
            "pipeline": {"name": "run", "steps": step(capability, &params)}});
        let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{capability} {params}: {body}"
        );
        assert!(
            body.to_string().contains(expected),
            "{capability} {params}: {body}"
        );
    }
}
