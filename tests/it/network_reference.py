"""The network analyses' reference: networkx over a graph rebuilt from the source files.

argv[1] is a manifest, a list of cases: `label`, `kind` (the capability), `params` (its
parameters), `path` (our result file), `lines` (where the graph's lines come from) and, per
point layer the capability reads, `origins`, `destinations` or `facilities`.

`lines` is either {"streets": file, "key": [field]} (each feature is a line; our rows are
matched to it by the key field) or {"rings": file, "name": field, "key": [name, index field]}
(each segment of each polygon ring is a line, numbered from 1 per feature as `extract_segments`
numbers them). A point layer is {"path": file, "id": field} or {"centroids": file, "id": field}
(the centroid of each feature, computed here). Prints one line per problem, or how many cases
were compared. Each graph and each search from a node is computed once per input
(`reference_cache`): a run after a change in geomill reads networkx's answers back.
"""
import json, sys, warnings
from collections import defaultdict
import geopandas as gpd, networkx as nx, numpy as np, shapely

from reference_cache import key_of, remembered, with_file_contents

warnings.filterwarnings("ignore")


def plain(v):
    """A pandas/numpy scalar as a plain Python value."""
    return v.item() if hasattr(v, "item") else v


def coords_of(geometries):
    """Each geometry's (x, y) coordinates as a tuple of tuples, for a whole array at once (None
    stays None)."""
    geometries = np.asarray(geometries, dtype=object)
    xy, index = shapely.get_coordinates(geometries, return_index=True)
    counts = np.bincount(index, minlength=len(geometries))
    points = list(map(tuple, xy.tolist()))
    out, start = [], 0
    for g, n in zip(geometries, counts):
        out.append(None if g is None else tuple(points[start:start + n]))
        start += n
    return out


def path_ends(geometries):
    """For each geometry of an array, the (first, last) coordinates of each of its parts."""
    parts, owner = shapely.get_parts(np.asarray(geometries, dtype=object), return_index=True)
    xy, index = shapely.get_coordinates(parts, return_index=True)
    numbers = np.arange(len(parts))
    first, last = np.searchsorted(index, numbers, "left"), np.searchsorted(index, numbers, "right") - 1
    points = list(map(tuple, xy.tolist()))
    ends = defaultdict(list)
    for k, i in enumerate(owner):
        ends[int(i)].append((points[first[k]], points[last[k]]) if first[k] <= last[k] else None)
    return ends


def reference_lines(spec):
    """(metres per CRS unit, [(key, [parts as coordinate lists], attributes)])."""
    if "streets" in spec:
        frame = gpd.read_file(spec["streets"])
        out = []
        for _, r in frame.iterrows():
            g = r.geometry
            parts = [] if g is None or g.is_empty else list(getattr(g, "geoms", [g]))
            out.append(((plain(r[spec["key"][0]]),), coords_of(parts), r))
    else:
        frame = gpd.read_file(spec["rings"])
        out = []
        for _, r in frame.iterrows():
            k = 0
            polygons = [] if r.geometry is None else getattr(r.geometry, "geoms", [r.geometry])
            for polygon in polygons:
                for ring in [polygon.exterior, *polygon.interiors]:
                    c = coords_of([ring])[0]
                    for a, b in zip(c, c[1:]):
                        k += 1
                        out.append(((plain(r[spec["name"]]), k), [[a, b]], r))
    unit = 1.0 if frame.crs.is_geographic else frame.crs.axis_info[0].unit_conversion_factor
    return unit, out


def graph_of(lines, unit, params):
    """(nodes sorted by x then y, edges [(u, v, cost, dir, key, coords)], networkx DiGraph)."""
    cost_field, directed, oneway = params.get("cost_field"), params.get("directed", False), params.get("oneway_field")
    raw = []
    for key, parts, r in lines:
        for c in parts:
            if len(c) < 2:
                continue
            cost = shapely.LineString(c).length * unit if cost_field is None else r[cost_field]
            if cost is None or (isinstance(cost, float) and np.isnan(cost)) or cost < 0:
                continue
            if directed:
                d = 1
            elif oneway is not None and r[oneway] is not None:
                t = str(r[oneway]).strip().lower()
                d = 1 if t in ("1", "true", "yes") else (-1 if t in ("-1", "reverse") else 0)
            else:
                d = 0
            raw.append((c[0], c[-1], float(cost), d, key, tuple(c)))
    nodes = sorted({e[0] for e in raw} | {e[1] for e in raw})
    number = {n: i for i, n in enumerate(nodes)}
    edges = [(number[a], number[b], c, d, key, cs) for a, b, c, d, key, cs in raw]
    G = nx.DiGraph()
    G.add_nodes_from(range(len(nodes)))
    def arc(u, v, c):
        if not G.has_edge(u, v) or G[u][v]["weight"] > c:
            G.add_edge(u, v, weight=c)
    for u, v, c, d, _, _ in edges:
        if d >= 0: arc(u, v, c)
        if d <= 0: arc(v, u, c)
    return np.asarray(nodes), edges, G


def reference_points(spec):
    """(ids, geometries) of a point layer."""
    if "path" in spec:
        frame = gpd.read_file(spec["path"])
        return [plain(i) for i in frame[spec["id"]]], list(frame.geometry)
    frame = gpd.read_file(spec["centroids"])
    return [plain(i) for i in frame[spec["id"]]], [None if g is None else g.centroid for g in frame.geometry]


def place(nodes, geometries):
    """Each point's nearest node (squared planar distance, ties to the lower number) or None."""
    out = []
    for g in geometries:
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


def edge_arrays(gkey, edges):
    """The edges' from-node, to-node, direction (ints) and cost (floats), once per graph."""
    if (gkey, "arrays") not in searches:
        u, v, d = (np.array([e[k] for e in edges], dtype=np.int64) for k in (0, 1, 3))
        searches[(gkey, "arrays")] = (u, v, d, np.array([e[2] for e in edges], dtype=float))
    return searches[(gkey, "arrays")]


def reach(gkey, edges, G, node):
    """Each edge's least cost to travel it end to end from `node` (infinite where not reached):
    the search's cost at the end it is entered from plus its own; kept per graph and node."""
    if (gkey, node, "reach") not in searches:
        at = distances_from(gkey, G, node)
        u, v, d, c = edge_arrays(gkey, edges)
        searches[(gkey, node, "reach")] = np.minimum(
            np.where(d >= 0, at[u] + c, np.inf), np.where(d <= 0, at[v] + c, np.inf))
    return searches[(gkey, node, "reach")]


def keyed(ours, fields):
    """Our rows as (key, row) pairs, the key being the values of `fields`."""
    keys = zip(*(ours[f].tolist() for f in fields))
    return list(zip(keys, ours.itertuples(index=False)))


cases = json.load(open(sys.argv[1]))
lines_of, graphs, searches = {}, {}, {}
problems = []


def graph_for(spec, params):
    """(key, nodes, edges, DiGraph) of the lines of `spec` weighted as `params` says; the key
    names the graph by the files' contents and the weighting."""
    source = json.dumps(spec, sort_keys=True)
    weighting = [params.get("cost_field"), params.get("directed", False), params.get("oneway_field")]
    key = key_of("graph", with_file_contents(spec), weighting)
    if key not in graphs:
        def build():
            unit, lines = reference_lines(spec)
            return (unit, [k for k, _, _ in lines], *graph_of(lines, unit, params))
        graphs[key] = remembered("graph", build, key)
    unit, keys, nodes, edges, G = graphs[key]
    lines_of[source] = (unit, keys)
    return key, nodes, edges, G


def distances_from(gkey, G, node):
    """networkx's least cost from `node` to each node (infinite where not reached), once per
    graph and node."""
    if (gkey, node) not in searches:
        def search():
            at = np.full(G.number_of_nodes(), np.inf)
            dist = nx.single_source_dijkstra_path_length(G, node)
            at[list(dist)] = list(dist.values())
            return at
        searches[(gkey, node)] = remembered("distances", search, gkey, node)
    return searches[(gkey, node)]


def od_pairs(case, nodes, G, gkey, ours, bad):
    ids_o, geoms_o = reference_points(case["origins"])
    ids_d, geoms_d = reference_points(case["destinations"])
    on, dn = place(nodes, geoms_o), place(nodes, geoms_d)
    if len(ours) != len(ids_o) * len(ids_d):
        bad.append(f"{len(ours)} rows for {len(ids_o)} x {len(ids_d)}")
    mine = {(plain(r.origin), plain(r.destination)): (i, r) for i, r in enumerate(ours.itertuples(index=False))}
    ends = path_ends(ours.geometry.values) if case["kind"] == "shortest_path" else {}
    for oi, o in enumerate(ids_o):
        distances = distances_from(gkey, G, on[oi]) if on[oi] is not None else None
        for di, d in enumerate(ids_d):
            i, r = mine.get((o, d), (None, None))
            if r is None:
                bad.append(f"pair {o},{d} missing"); continue
            reached = distances is not None and dn[di] is not None and np.isfinite(distances[dn[di]])
            want = float(distances[dn[di]]) if reached else None
            if null(r.cost) != (want is None) or (want is not None and not close(r.cost, want)):
                bad.append(f"{o}->{d}: {r.cost} vs {want}")
            if case["kind"] != "shortest_path" or want is None or want == 0:
                continue
            if r.geometry is None or int(r.edges) != len(r.geometry.geoms):
                bad.append(f"{o}->{d}: {r.edges} edges, geometry {r.geometry}"[:200]); continue
            length = r.geometry.length * unit_of(case)
            if case["params"].get("cost_field") is None and not close(length, want):
                bad.append(f"{o}->{d}: a path of {length} m at cost {want}"); continue
            at = tuple(nodes[on[oi]])
            for line in ends[i]:
                a, b = line if line is not None else (None, None)
                if at == a: at = b
                elif at == b: at = a
                else:
                    bad.append(f"{o}->{d}: the path breaks"); break
            if at != tuple(nodes[dn[di]]):
                bad.append(f"{o}->{d}: the path ends elsewhere")


def unit_of(case):
    return lines_of[json.dumps(case["lines"], sort_keys=True)][0]


def bands_reached(gkey, edges, G, node, bands):
    """{edge number: (least cost, band number from 1)} of the edges reached within the last
    band from `node`, and each band's hull area (None where nothing is reached): once per
    graph, node and bands."""
    key = (gkey, node, tuple(bands), "bands")
    if key not in searches:
        def search():
            r = reach(gkey, edges, G, node)
            inside = np.nonzero(r <= bands[-1])[0]
            band = np.searchsorted(np.asarray(bands, dtype=float), r[inside], "left") + 1
            want = {int(i): (float(r[i]), int(b)) for i, b in zip(inside, band)}
            hulls = []
            for k in range(len(bands)):
                lines = [shapely.LineString(edges[i][5]) for i, (c, b) in want.items() if b <= k + 1]
                hulls.append(shapely.MultiLineString(lines).convex_hull.area if lines else None)
            return want, hulls
        searches[key] = remembered("bands", search, gkey, node, bands)
    return searches[key]


def isochrone(case, nodes, edges, G, gkey, ours, bad):
    ids, geoms = reference_points(case["origins"])
    on = place(nodes, geoms)
    bands = case["params"]["bands"]
    polygons = case["params"].get("output") == "polygons"
    rows_of = defaultdict(list)
    for i, v in enumerate(ours.origin.tolist()):
        rows_of[v].append(i)
    costs, band_of, shapes = ours.cost.to_numpy(), ours.band.to_numpy(), ours.geometry.values
    coords = None if polygons else coords_of(shapes)
    for oi, o in enumerate(ids):
        mine = rows_of.get(o, [])
        if on[oi] is None:
            if len(mine): bad.append(f"origin {o} without a geometry reached {len(mine)}")
            continue
        want, hulls = bands_reached(gkey, edges, G, on[oi], bands)
        if polygons:
            for k in range(len(bands)):
                row = [i for i in mine if band_of[i] == k + 1]
                if hulls[k] is None:
                    if len(row): bad.append(f"origin {o} band {k+1}: a polygon where nothing is reached")
                    continue
                if len(row) != 1 or not close(shapes[row[0]].area, hulls[k]):
                    bad.append(f"origin {o} band {k+1}: {[shapes[i].area for i in row]} vs {hulls[k]}")
            continue
        wanted, got = defaultdict(list), defaultdict(list)
        for i, (c, band) in want.items():
            wanted[edges[i][5]].append((c, band))
        for i in mine:
            got[coords[i]].append((costs[i], int(band_of[i])))
        if set(got) != set(wanted):
            bad.append(f"origin {o}: {len(got)} edges vs {len(wanted)}")
            continue
        for at, w in wanted.items():
            g = sorted(got[at])
            if len(g) != len(w) or any(not close(a[0], b[0]) or a[1] != b[1] for a, b in zip(g, sorted(w))):
                bad.append(f"origin {o} edge {at[:1]}: {g} vs {sorted(w)}")


def allocation(case, nodes, edges, G, gkey):
    """(each facility's reach, each line's least cost, each line's edges), once per graph and
    facility layer: the same for every engine's answer."""
    key = (gkey, json.dumps(case["facilities"], sort_keys=True), "allocation")
    if key not in searches:
        ids, geoms = reference_points(case["facilities"])
        fn = place(nodes, geoms)
        per = {}
        for fi, f in enumerate(ids):
            if fn[fi] is not None:
                per.setdefault(f, reach(gkey, edges, G, fn[fi]))
        cheapest = np.min(np.vstack(list(per.values())), axis=0) if per else np.full(len(edges), np.inf)
        best, parts_of = {}, defaultdict(list)
        for i, e in enumerate(edges):
            parts_of[e[4]].append(i)
            if np.isfinite(cheapest[i]):
                best[e[4]] = min(best.get(e[4], float("inf")), float(cheapest[i]))
        searches[key] = (per, best, parts_of)
    return searches[key]


def connectivity(nodes, edges, gkey):
    """(each line's (component number, its edge count), how many components), once per graph:
    components numbered by edge count, most first, ties by their lowest node."""
    if (gkey, "components") not in searches:
        U = nx.Graph()
        U.add_nodes_from(range(len(nodes)))
        U.add_edges_from((e[0], e[1]) for e in edges)
        component = {n: k for k, c in enumerate(nx.connected_components(U)) for n in c}
        count, lowest = defaultdict(int), {}
        for n, k in component.items():
            lowest[k] = min(lowest.get(k, n), n)
        for e in edges:
            count[component[e[0]]] += 1
        order = sorted(count, key=lambda k: (-count[k], lowest[k]))
        number = {k: (i + 1, count[k]) for i, k in enumerate(order)}
        want = {}
        for e in edges:
            want[e[4]] = min(want.get(e[4], number[component[e[0]]]), number[component[e[0]]])
        searches[(gkey, "components")] = (want, len(order))
    return searches[(gkey, "components")]


def spanning_forest(edges, gkey):
    """(the undirected graph, its minimum spanning forest's weight), once per graph."""
    if (gkey, "forest") not in searches:
        U = nx.Graph()
        for u, v, c, _, _, _ in edges:
            if u != v and (not U.has_edge(u, v) or U[u][v]["weight"] > c):
                U.add_edge(u, v, weight=c)
        searches[(gkey, "forest")] = (U, nx.minimum_spanning_tree(U).size(weight="weight"))
    return searches[(gkey, "forest")]


def per_line(case, nodes, edges, G, gkey, ours, bad):
    """The analyses answering per line: allocation, connectivity, spanning forest."""
    kind, lines = case["kind"], lines_of[json.dumps(case["lines"], sort_keys=True)][1]
    rows = keyed(ours, case["lines"]["key"])
    if kind != "mst" and sorted(k for k, _ in rows) != sorted(lines):
        bad.append(f"{len(rows)} rows for {len(lines)} lines, or other keys")
    if kind == "network_allocation":
        per, best, parts_of = allocation(case, nodes, edges, G, gkey)
        for key, r in rows:
            want = best.get(key)
            if null(r.cost) != (want is None) or (want is not None and not close(r.cost, want)):
                bad.append(f"line {key}: cost {r.cost} vs {want}")
            elif want is not None and not any(np.isfinite(per[plain(r.facility)][i]) and close(float(per[plain(r.facility)][i]), want) for i in parts_of[key]):
                bad.append(f"line {key}: facility {r.facility} does not reach it at {want}")
    elif kind == "connectivity_check":
        want, components = connectivity(nodes, edges, gkey)
        for key, r in rows:
            w = want.get(key)
            got = None if null(r.component) else (int(r.component), int(r.component_edges))
            if got != w or (w is not None and bool(r.isolated) != (w[0] != 1)):
                bad.append(f"line {key}: {got} {r.isolated} vs {w}")
        if components < 2:
            bad.append(f"the reference found {components} components")
    elif kind == "mst":
        U, full = spanning_forest(edges, gkey)
        kept = {k for k, _ in rows}
        K = nx.Graph()
        for u, v, c, _, key, _ in edges:
            if key in kept and u != v and (not K.has_edge(u, v) or K[u][v]["weight"] > c):
                K.add_edge(u, v, weight=c)
        sub = nx.minimum_spanning_tree(K).size(weight="weight")
        if not close(sub, full) or nx.number_connected_components(K) != nx.number_connected_components(U.subgraph(K.nodes)) or K.number_of_nodes() != U.number_of_nodes():
            bad.append(f"forest weight {sub} vs {full}, {K.number_of_nodes()} of {U.number_of_nodes()} nodes")
        if len(ours) > U.number_of_nodes():
            bad.append(f"{len(ours)} lines kept for {U.number_of_nodes()} nodes")


for case in cases:
    gkey, nodes, edges, G = graph_for(case["lines"], case["params"])
    ours = gpd.read_file(case["path"])
    bad = []
    if case["kind"] in ("od_matrix", "shortest_path"):
        od_pairs(case, nodes, G, gkey, ours, bad)
    elif case["kind"] == "isochrone":
        isochrone(case, nodes, edges, G, gkey, ours, bad)
    else:
        per_line(case, nodes, edges, G, gkey, ours, bad)
    if bad:
        problems.append(f"{case['label']}: {len(bad)} differences, first {bad[:3]}"[:700])
print("\n".join(problems) or f"compared {len(cases)} cases")
