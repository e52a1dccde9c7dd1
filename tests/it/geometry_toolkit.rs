//! The per-feature geometry capabilities against Shapely 2: the Natural Earth countries and
//! cities (Shapefiles), the NYC boroughs (a zip) and the generated regions (NULL, empty and
//! invalid geometries) uploaded, each capability run through `/api/pipelines/execute` on the
//! embedded and PostGIS engines, and every feature compared with Shapely's answer on the source
//! file: the same count, geometries equal (exactly, or topologically, or polygons within 1e-6
//! of their area by symmetric difference).

use serde_json::{Value, json};

use crate::common;
use common::pipeline::step;
use common::real::{real_layers, run_python};
use common::uploads::{run, shared_datasets, shared_paths, upload};

/// Compares each case with Shapely; prints one line per case that differs. Shapely's answers are
/// computed once per source, capability and parameters (`reference_cache`), for both engines'
/// results.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, shapely
from shapely import affinity, ops
from reference_cache import read_layer as read, remembered
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))

def merged_boundary(g):
    return shapely.line_merge(shapely.boundary(g))

def substring(g, p):
    line = merged_boundary(g)
    if line.geom_type != "LineString":
        return None
    return ops.substring(line, p["start"], p["end"], normalized=True)

def valid(g):
    """GEOS MakeValid keeping the parts of the input's dimension, as the capability does."""
    if shapely.is_valid(g):
        return g
    dimension = shapely.get_dimensions(g)
    parts = [part for part in shapely.get_parts(shapely.make_valid(g))
             if shapely.get_dimensions(part) == dimension]
    return shapely.union_all(parts) if parts else None

def map_lines(g, f):
    """`f(coords, closed)` applied to every line and ring, 2-D; points kept."""
    if g.is_empty:
        return shapely.force_2d(g)
    t = g.geom_type
    if t in ("Point", "MultiPoint"):
        return shapely.force_2d(g)
    if t == "LineString":
        return shapely.LineString(f(np.asarray(g.coords)[:, :2], False))
    if t == "Polygon":
        return shapely.Polygon(f(np.asarray(g.exterior.coords)[:, :2], True),
                               [f(np.asarray(h.coords)[:, :2], True) for h in g.interiors])
    return type(g)([map_lines(part, f) for part in g.geoms])

def chaikin_once(c, closed):
    """PostGIS's ST_ChaikinSmoothing: quarter points of each segment; lines keep their ends."""
    n = len(c)
    if n < 3 and not closed:
        return c
    out = [] if closed else [c[0]]
    for i in range(n - 1):
        a, b = c[i], c[i + 1]
        if closed or i > 0:
            out.append(a + (b - a) * 0.25)
        if closed or i + 2 < n:
            out.append(b - (b - a) * 0.25)
    out.append(out[0] if closed else c[-1])
    return np.array(out)

def chaikin(g, p):
    def smooth(c, closed):
        for _ in range(p.get("iterations", 1)):
            c = chaikin_once(c, closed)
        return c
    return map_lines(g, smooth)

EARTH = 6371008.8

def unit(lonlat):
    lon, lat = np.radians(lonlat)
    return np.array([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])

def great_circle_densify(g, p):
    """Each segment cut into ceil(arc / max) equal great-circle arcs (slerp)."""
    def cut(c, closed):
        out = [c[0]]
        for a, b in zip(c[:-1], c[1:]):
            u, v = unit(a), unit(b)
            angle = np.arctan2(np.linalg.norm(np.cross(u, v)), np.dot(u, v))
            pieces = int(np.ceil(angle * EARTH / p["max_length"]))
            for j in range(1, pieces):
                f = j / pieces
                w = (np.sin((1 - f) * angle) * u + np.sin(f * angle) * v) / np.sin(angle)
                out.append([np.degrees(np.arctan2(w[1], w[0])), np.degrees(np.arctan2(w[2], np.hypot(w[0], w[1])))])
            if len(c) == 2 or not np.array_equal(out[-1], b):
                out.append(b)
        return np.array(out)
    return map_lines(g, cut)

def bounding_circle(g, p):
    """PostGIS's drawing of the smallest circle: its polygon's edges touch the circle."""
    if g.is_empty:
        return shapely.force_2d(g)
    # Of every vertex: GEOS reads polygon shells only (holes outside an invalid shell too).
    g = shapely.multipoints(shapely.get_coordinates(g))
    radius = shapely.minimum_bounding_radius(g)
    circle = shapely.minimum_bounding_circle(g)
    if radius == 0:
        return shapely.Point(circle.coords[0] if circle.geom_type == "Point" else circle.centroid.coords[0])
    cx, cy = circle.centroid.x, circle.centroid.y
    steps = 4 * p.get("segments", 8)
    outer = radius / np.cos(np.pi / steps)
    angles = np.arange(steps) * 2 * np.pi / steps
    ring = np.column_stack([cx + outer * np.sin(angles), cy + outer * np.cos(angles)])
    return shapely.Polygon(ring)

def offset(g, p):
    line = g
    d = p["distance"] * (-1 if p.get("side") == "right" else 1)
    return shapely.offset_curve(line, d, quad_segs=p.get("segments", 8),
                                join_style=p.get("join", "round"), mitre_limit=p.get("mitre_limit", 5.0))

def single(g):
    return g.geoms[0] if g.geom_type.startswith("Multi") and len(g.geoms) == 1 else g

REFERENCE = {
    "boundary": lambda g, p: shapely.boundary(g),
    "envelope": lambda g, p: shapely.envelope(g),
    "make_valid": lambda g, p: valid(g),
    "swap_xy": lambda g, p: shapely.transform(g, lambda c: c[:, ::-1]),
    "reverse_lines": lambda g, p: shapely.reverse(g),
    "drop_z": lambda g, p: shapely.force_2d(g),
    "drop_m": lambda g, p: shapely.force_2d(g),
    "add_z": lambda g, p: shapely.force_3d(g, p.get("value", 0)),
    "add_m": lambda g, p: g,
    "line_merge": lambda g, p: merged_boundary(g),
    "line_substring": substring,
    "snap_to_grid": lambda g, p: shapely.set_precision(shapely.make_valid(g) if not shapely.is_valid(g) else g, p["size"]),
    "affine_transform": lambda g, p: affinity.affine_transform(
        g, [p["a"], p["b"], p["d"], p["e"], p["xoff"], p["yoff"]]),
    "force_geometry_type": lambda g, p: (
        g if g.geom_type.startswith("Multi") or g.geom_type == "GeometryCollection"
        else shapely.multipolygons([g]) if g.geom_type == "Polygon"
        else shapely.multilinestrings([g]) if g.geom_type == "LineString"
        else shapely.multipoints([g])) if p["type"] == "multi" else single(g),
    "oriented_bbox": lambda g, p: g if g.is_empty else shapely.oriented_envelope(g),
    "min_bounding_circle": bounding_circle,
    "densify_vertices": lambda g, p: (great_circle_densify(g, p) if p.get("unit", "meters") == "meters"
                                      else shapely.segmentize(shapely.force_2d(g), p["max_length"])),
    "chaikin_smooth": chaikin,
    "offset_curve": offset,
    "assign_projection": lambda g, p: g,
    "concave_hull": lambda g, p: shapely.concave_hull(shapely.force_2d(g), ratio=p.get("ratio", 0.3),
                                                      allow_holes=p.get("allow_holes", False)),
    "alpha_shape": lambda g, p: (
        shapely.concave_hull(g, ratio=p["as_ratio"], allow_holes=p.get("allow_holes", False))
        if "as_ratio" in p else small_triangles(g, p["alpha"])),
}

def small_triangles(g, alpha):
    """The textbook alpha shape: the union of the Delaunay triangles of circumradius < alpha
    (computed for every triangle at once; the triangles tile, so their union is a coverage
    union, which gives the same polygons as `union_all` in a fraction of the time)."""
    if g.is_empty:
        return shapely.Polygon()
    triangles = shapely.get_parts(shapely.delaunay_triangles(g))
    corners = shapely.get_coordinates(shapely.get_exterior_ring(triangles)).reshape(-1, 4, 2)
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    area = np.abs((c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1]) - (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1])) / 2
    sides = np.linalg.norm(a - b, axis=1) * np.linalg.norm(b - c, axis=1) * np.linalg.norm(c - a, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.where(area == 0, np.inf, sides / (4 * area))
    small = triangles[radius < alpha]
    return shapely.coverage_union_all(small) if len(small) else shapely.union_all([])

def alpha_properties(mine, theirs, g, p):
    """GEOS's alpha shape only takes off triangles of circumradius >= alpha from the border
    (and, with holes allowed, from inside), keeping one polygon: it holds every small triangle
    (the textbook alpha shape), every vertex, lies in the convex hull of the vertices, is one
    valid polygon, without holes unless allowed. Fewer than three vertices off one line give
    their convex hull (a point or a line). With `as_ratio`, an alpha above every circumradius
    takes nothing off, as the concave hull of ratio 1 does: the two are the same shape."""
    if "as_ratio" in p:
        return same(mine, theirs)
    if g is None or g.is_empty:
        return mine is None or mine.is_empty
    hull = vertex_hull(g)
    if hull.geom_type != "Polygon":
        return same(mine, hull)
    scale = max(hull.area, 1e-12)
    return (hull_of_vertices(mine, g) and theirs.difference(mine).area <= 1e-9 * scale
            and (p.get("allow_holes") or len(mine.interiors) == 0))

def same(a, b, *_):
    if a is None or b is None or (a.is_empty and b.is_empty):
        return (a is None or a.is_empty) == (b is None or b.is_empty)
    if shapely.equals_exact(shapely.normalize(a), shapely.normalize(b), tolerance=1e-9):
        return True
    if a.geom_type.endswith("Polygon") and b.geom_type.endswith("Polygon"):
        return shapely.symmetric_difference(a, b).area <= 1e-6 * max(b.area, 1e-12)
    return bool(shapely.equals(a, b))

def least_rectangle(mine, theirs, g, p):
    """A rectangle that covers the geometry and is no larger than GEOS's (ties may differ)."""
    if not mine or mine.is_empty or theirs is None or theirs.geom_type != "Polygon":
        return same(mine, theirs)
    size = max(theirs.area, 1e-12)
    covers = shapely.covers(shapely.buffer(mine, 1e-9 * np.sqrt(size)), g)
    return covers and mine.area <= theirs.area * (1 + 1e-9) and len(mine.exterior.coords) == 5

def offset_stretches(mine, theirs, g, p):
    """GEOS 3.14's offset curve: the same stretches (one LineString, or a MultiLineString of as
    many parts) within 2 % of the distance of GEOS's in Hausdorff distance: the two differ
    only by a vertex where a segment much shorter than the distance starts or ends the line."""
    if mine is None or theirs is None or mine.is_empty or theirs.is_empty:
        return same(mine, theirs)
    return (shapely.get_num_geometries(mine) == shapely.get_num_geometries(theirs)
            and shapely.hausdorff_distance(mine, theirs) <= 0.02 * p["distance"])

def vertex_hull(g):
    """The convex hull of all the vertices (GEOS's hull of a polygon reads its shell only, and
    an invalid polygon's hole may reach past its shell)."""
    return shapely.convex_hull(shapely.multipoints(shapely.get_coordinates(g)))

def hull_of_vertices(mine, g):
    """One valid polygon in the convex hull of the vertices, holding every vertex."""
    hull = vertex_hull(g)
    scale = max(hull.area, 1e-12)
    vertices = shapely.multipoints(shapely.get_coordinates(g))
    return (mine is not None and mine.geom_type == "Polygon" and mine.is_valid
            and mine.difference(hull).area <= 1e-9 * scale
            and shapely.buffer(mine, 1e-9 * np.sqrt(scale)).covers(vertices))

SAME = {"oriented_bbox": least_rectangle, "offset_curve": offset_stretches,
        "alpha_shape": alpha_properties}

def shapely_answers(geometries, capability, p):
    """Shapely's answer for each geometry the capability reads (None for a NULL one)."""
    reference = REFERENCE[capability]
    return [None if g is None else reference(g, p) for g in geometries]

def source_and_reference(case):
    """The source's rows (after the case's own preparation) and, per feature, the geometry the
    capability reads and Shapely's answer; prepared once per source, capability and parameters
    in a run, for both engines' results, Shapely's answers kept by `reference_cache`."""
    p = case["params"]
    read_source = read(case["source"])
    source = read_source
    if p.get("affine"):
        source = source.set_geometry(
            [None if g is None else affinity.affine_transform(g, p["affine"]) for g in source.geometry])
    if p.get("gathered"):
        # `singleparts_to_multipart` without fields: one MultiPoint of every point.
        points = [g for g in source.geometry if g is not None and not g.is_empty]
        source = gpd.GeoDataFrame(geometry=[shapely.MultiPoint(points)])
    geometries = []
    for g in source.geometry:
        if g is not None and p.get("boundary"):
            g = shapely.boundary(g)
        if g is not None and p.get("open_lines"):
            g = substring(g, {"start": 0.1, "end": 0.6})
        geometries.append(g)
    # The prepared geometries follow from the file's and the parameters: those are the key.
    answers = remembered("answers", lambda: shapely_answers(geometries, case["capability"], p),
                         read_source.geometry, case["capability"], p)
    return source, list(zip(geometries, answers))

references = {}
for case in cases:
    label, p = case["label"], case["params"]
    try:
        ours = gpd.read_file(case["path"])
    except Exception as error:
        problems.append(f"{label}: the result does not read: {error}")
        continue
    key = (case["source"], case["capability"], json.dumps(p, sort_keys=True))
    if key not in references:
        references[key] = source_and_reference(case)
    source, pairs = references[key]
    if len(ours) != len(source):
        problems.append(f"{label}: {len(ours)} rows, the source has {len(source)}")
        continue
    same_as = SAME.get(case["capability"], same)
    bad = [i for i, (mine, (g, theirs)) in enumerate(zip(ours.geometry, pairs))
           if not same_as(mine, theirs, g, p)]
    if case["capability"] == "assign_projection" and ours.crs.to_epsg() != p["epsg"]:
        problems.append(f"{label}: declared {ours.crs}, not EPSG:{p['epsg']}")
    if case["capability"] == "add_z" and not all(g is None or g.is_empty or g.has_z for g in ours.geometry):
        problems.append(f"{label}: geometries without Z")
    if bad:
        problems.append(f"{label}: {len(bad)} of {len(ours)} features differ from Shapely's, first "
                        f"{bad[0]}: {ours.geometry[bad[0]]} vs source {source.geometry[bad[0]]}"[:400])
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn geometry_capabilities_equal_shapely_on_both_engines() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("toolkit").await;
    let (regions_path, _) = real_layers(dir.path(), 0, 10.0);
    let regions = upload(
        &state,
        &[("regions.gpkg", std::fs::read(&regions_path).unwrap())],
    )
    .await;
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let sources = [
        (&countries, countries_path),
        (&cities, cities_path),
        (&boroughs, boroughs_path),
        (&regions, regions_path.display().to_string()),
    ];
    let affine = json!({"a": 0.5, "b": -0.25, "d": 0.25, "e": 2.0, "xoff": 10.0, "yoff": -5.0});
    let hull = |ratio: f64, holes: bool| json!({"ratio": ratio, "allow_holes": holes});
    let alpha = |alpha: f64, holes: bool| json!({"alpha": alpha, "allow_holes": holes});
    let cases: Vec<(&String, &str, Value, Value)> = vec![
        (
            &countries,
            "concave_hull",
            hull(0.3, false),
            step("concave_hull", hull(0.3, false)),
        ),
        (
            &countries,
            "concave_hull",
            hull(0.05, true),
            step("concave_hull", hull(0.05, true)),
        ),
        (
            &boroughs,
            "concave_hull",
            hull(0.1, true),
            step("concave_hull", hull(0.1, true)),
        ),
        (
            &regions,
            "concave_hull",
            hull(0.2, false),
            step("concave_hull", hull(0.2, false)),
        ),
        (
            &cities,
            "concave_hull",
            hull(0.3, false),
            step("concave_hull", hull(0.3, false)),
        ),
        (
            &countries,
            "alpha_shape",
            alpha(1.0, false),
            step("alpha_shape", alpha(1.0, false)),
        ),
        (
            &boroughs,
            "alpha_shape",
            alpha(3000.0, true),
            step("alpha_shape", alpha(3000.0, true)),
        ),
        (
            &regions,
            "alpha_shape",
            alpha(0.5, true),
            step("alpha_shape", alpha(0.5, true)),
        ),
        // An alpha above every circumradius takes no triangle off: Shapely's concave hull of
        // ratio 1 (the triangulation of every vertex, holes' too, whole).
        (
            &regions,
            "alpha_shape",
            json!({"alpha": 1e100, "allow_holes": true, "as_ratio": 1.0}),
            step("alpha_shape", alpha(1e100, true)),
        ),
        (
            &countries,
            "alpha_shape",
            json!({"alpha": 1e100, "as_ratio": 1.0}),
            step("alpha_shape", alpha(1e100, false)),
        ),
        // One point each: the point.
        (
            &cities,
            "alpha_shape",
            alpha(1.0, false),
            step("alpha_shape", alpha(1.0, false)),
        ),
        // The cities gathered into one MultiPoint.
        (
            &cities,
            "alpha_shape",
            json!({"alpha": 10.0, "allow_holes": true, "gathered": true}),
            json!([{"id": "g", "capability": "singleparts_to_multipart", "params": {}},
                   {"id": "s", "capability": "alpha_shape", "params": alpha(10.0, true)}]),
        ),
        // The cities moved onto the line y = 0, then gathered: collinear points, a line.
        (
            &cities,
            "alpha_shape",
            json!({"alpha": 10.0, "gathered": true, "affine": [1, 0, 0, 0, 0, 0]}),
            json!([{"id": "a", "capability": "affine_transform", "params": {"e": 0}},
                   {"id": "g", "capability": "singleparts_to_multipart", "params": {}},
                   {"id": "s", "capability": "alpha_shape", "params": alpha(10.0, false)}]),
        ),
        (
            &countries,
            "boundary",
            json!({}),
            step("boundary", json!({})),
        ),
        (&regions, "boundary", json!({}), step("boundary", json!({}))),
        (
            &boroughs,
            "envelope",
            json!({}),
            step("envelope", json!({})),
        ),
        (&regions, "envelope", json!({}), step("envelope", json!({}))),
        (
            &regions,
            "make_valid",
            json!({}),
            step("make_valid", json!({})),
        ),
        (&countries, "swap_xy", json!({}), step("swap_xy", json!({}))),
        (&regions, "swap_xy", json!({}), step("swap_xy", json!({}))),
        (
            &boroughs,
            "reverse_lines",
            json!({}),
            step("reverse_lines", json!({})),
        ),
        (
            &cities,
            "add_z",
            json!({"value": 12.5}),
            step("add_z", json!({"value": 12.5})),
        ),
        (&countries, "drop_z", json!({}), step("drop_z", json!({}))),
        (&cities, "drop_m", json!({}), step("drop_m", json!({}))),
        (
            &cities,
            "add_m",
            json!({"value": 3}),
            step("add_m", json!({"value": 3})),
        ),
        (
            &countries,
            "line_merge",
            json!({}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "m", "capability": "line_merge", "params": {}}]),
        ),
        (
            &countries,
            "line_substring",
            json!({"start": 0.2, "end": 0.7}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "m", "capability": "line_merge", "params": {}},
                   {"id": "s", "capability": "line_substring", "params": {"start": 0.2, "end": 0.7}}]),
        ),
        (
            &countries,
            "snap_to_grid",
            json!({"size": 0.5}),
            step("snap_to_grid", json!({"size": 0.5})),
        ),
        (
            &boroughs,
            "affine_transform",
            affine.clone(),
            step("affine_transform", affine.clone()),
        ),
        (
            &countries,
            "force_geometry_type",
            json!({"type": "multi"}),
            step("force_geometry_type", json!({"type": "multi"})),
        ),
        (
            &regions,
            "force_geometry_type",
            json!({"type": "single"}),
            step("force_geometry_type", json!({"type": "single"})),
        ),
        (
            &boroughs,
            "oriented_bbox",
            json!({}),
            step("oriented_bbox", json!({})),
        ),
        (
            &regions,
            "oriented_bbox",
            json!({}),
            step("oriented_bbox", json!({})),
        ),
        (
            &countries,
            "min_bounding_circle",
            json!({"segments": 8}),
            step("min_bounding_circle", json!({})),
        ),
        (
            &regions,
            "min_bounding_circle",
            json!({"segments": 3}),
            step("min_bounding_circle", json!({"segments": 3})),
        ),
        (
            &countries,
            "densify_vertices",
            json!({"max_length": 100_000.0}),
            step(
                "densify_vertices",
                json!({"max_length": 100, "unit": "kilometers"}),
            ),
        ),
        (
            &boroughs,
            "densify_vertices",
            json!({"max_length": 300.0, "unit": "crs"}),
            step(
                "densify_vertices",
                json!({"max_length": 300, "unit": "crs"}),
            ),
        ),
        (
            &regions,
            "chaikin_smooth",
            json!({"iterations": 2}),
            step("chaikin_smooth", json!({"iterations": 2})),
        ),
        (
            &countries,
            "chaikin_smooth",
            json!({"iterations": 1, "boundary": true}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "s", "capability": "chaikin_smooth", "params": {}}]),
        ),
        (
            &countries,
            "offset_curve",
            json!({"distance": 0.05, "side": "right", "open_lines": true}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "m", "capability": "line_merge", "params": {}},
                   {"id": "s", "capability": "line_substring", "params": {"start": 0.1, "end": 0.6}},
                   {"id": "o", "capability": "offset_curve",
                    "params": {"distance": 0.05, "unit": "degrees", "side": "right"}}]),
        ),
        (
            &countries,
            "offset_curve",
            json!({"distance": 0.4, "join": "bevel", "segments": 3, "open_lines": true}),
            json!([{"id": "b", "capability": "boundary", "params": {}},
                   {"id": "m", "capability": "line_merge", "params": {}},
                   {"id": "s", "capability": "line_substring", "params": {"start": 0.1, "end": 0.6}},
                   {"id": "o", "capability": "offset_curve",
                    "params": {"distance": 0.4, "unit": "degrees", "join": "bevel", "segments": 3}}]),
        ),
        (
            &cities,
            "assign_projection",
            json!({"epsg": 4269}),
            step("assign_projection", json!({"crs": "EPSG:4269"})),
        ),
    ];
    let mut manifest = Vec::new();
    for (dataset, capability, params, steps) in cases {
        let source = &sources.iter().find(|(id, _)| *id == dataset).unwrap().1;
        for engine in ["embedded", "postgis"] {
            let path = run(&state, dataset, engine, steps.clone()).await;
            manifest.push(json!({"label": format!("{engine} {steps}"), "path": path,
                "capability": capability, "params": params, "source": source}));
        }
    }
    let file = dir.path().join("toolkit.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
