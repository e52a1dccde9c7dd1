"""GISPulse conformance: each case's document run by GISPulse 2.2.3 itself (in this process, as
its `run` command runs it, the answer remembered per document and input) and compared with
geomill's answers on the engines the Rust test ran.

argv: the manifest (JSON list of {case, engine, result}) and the layers (JSON {name: path}).
Prints one line per difference, or `compared N answers of M cases`.

Equal means: the same rows (matched by the case's `key` columns, else in order after sorting
by every attribute), the same column names (GISPulse's `geometry` is geomill's `geom`; a
geometry column of NULLs only is no geometry column), numbers
within 1e-6 relative, text equal, geometries within 1e-6 of the layer's extent (the area of
their symmetric difference relative to the extent's area for polygons, the Hausdorff distance
relative to its diagonal otherwise).

A case whose answer is rightly empty says `"empty": true`; otherwise an empty GISPulse answer
fails (equal empty answers prove nothing). A case where GISPulse itself is wrong says why in
`gispulse_wrong`: geomill's answer is compared with an independent reference instead (its
last step computed by `REFERENCES[capability]` with Shapely, on the inputs GISPulse's earlier
steps give), and GISPulse's own answer must still differ from that reference, so that the
list of such cases stays true. A case saying `gispulse_unavailable` (why: a capability
GISPulse reserves to its licensed Pro tier) is compared with that reference alone, as is a
case saying `reference_only` (why: GISPulse's answer depends on the CPU it runs on).
A case saying `reference` (what the reference is) is compared
with both: GISPulse and its last step's `REFERENCES` definition (networkx, for instance).
A case's `differs_on` ({engine: why}) lists engines known to answer otherwise; their
differences are printed as `KNOWN ...` (not failures), and a known difference that no longer
differs is reported so that the list stays true.
"""
import contextlib, json, math, os, sys, warnings

os.environ.setdefault("GISPULSE_LOG_LEVEL", "WARNING")
os.environ["GISPULSE_NO_UPDATE_CHECK"] = "1"
warnings.filterwarnings("ignore")

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from reference_cache import read_layer, remembered

TOLERANCE = 1e-6


def layer_name(path):
    """`countries.shp` → `countries` (the case's name for a shared layer)."""
    return os.path.basename(path).split(".")[0]


def run_gispulse(document, frame, refs, every_step=False):
    """GISPulse's answer to `document` on `frame`, `refs` naming the reference layers (with
    `every_step`, a v2 document's layers by name: its inputs and each step's answer)."""
    import gispulse.capabilities  # noqa: F401  (registers the capabilities)
    # Registered only when GISPulse's registry loads its defaults, which a rules engine alone
    # does not ask for.
    import gispulse.capabilities.network_components  # noqa: F401
    import gispulse.capabilities.network_graph  # noqa: F401
    from gispulse.core.models import Rule
    from gispulse.core.pipeline import _parse_v2
    from gispulse.core.pipeline_schema import validate_pipeline_json
    from gispulse.orchestration.pipeline_executor import PipelineExecutor
    from gispulse.rules.engine import RuleEngine

    errors = validate_pipeline_json(document)
    if errors:
        raise ValueError("; ".join(errors))
    if isinstance(document, dict):
        spec = _parse_v2(document)
        inputs = {"input": frame}
        for alias, path in (document.get("ref_layers") or {}).items():
            inputs[alias] = refs[layer_name(path)]
        result = PipelineExecutor().execute(spec, inputs)
        if every_step:
            return {**inputs, **result}
        return list(result.values())[-1] if result else frame
    rules = []
    for i, entry in enumerate(document):
        config = dict(entry.get("config", {}))
        order = entry.get("order", config.pop("order", i))
        rules.append(Rule(name=entry.get("name", f"rule_{i}"), capability=entry["capability"],
                          config=config, enabled=entry.get("enabled", True), order=order))
    enabled = [r for r in rules if r.enabled]
    return RuleEngine().apply_all(enabled, frame, layer_resolver=lambda name: refs[name])


def gispulse_answer(case, layers):
    frame = read_layer(layers[case["input"]])
    refs = {name: read_layer(path) for name, path in layers.items()}

    def compute():
        # GISPulse logs to standard output, which carries this script's answer.
        with contextlib.redirect_stdout(sys.stderr):
            answer = run_gispulse(case["document"], frame.copy(), {k: v.copy() for k, v in refs.items()})
        return gpd.GeoDataFrame(answer).rename_geometry("geom") if "geometry" in answer else answer
    return remembered("gispulse", compute, case["document"], frame, *refs.values())


def locate_along_nearest_line(points, lines, params):
    """`line_locate_point` by its definition: each point (a non-point by its centroid) in
    `crs_meters`, the nearest line of all (the first on equal distances), the distance along
    it (or its fraction, `normalized`) and its 0-based position."""
    crs = params.get("crs_meters", "EPSG:3857")
    located, lines = points.to_crs(crs), lines.to_crs(crs).geometry.reset_index(drop=True)
    measures, indices = [], []
    for shape in located.geometry:
        if shape is None or shape.is_empty:
            measures.append(math.nan)
            indices.append(-1)
            continue
        point = shape if shape.geom_type == "Point" else shape.centroid
        nearest = int(np.argmin(shapely.distance(point, lines.values)))
        measures.append(lines.iloc[nearest].project(point, normalized=bool(params.get("normalized"))))
        indices.append(nearest)
    answer = points.copy()
    answer[params.get("measure_col", "measure")] = measures
    answer[params.get("ref_index_col", "ref_index")] = indices
    return answer


def components_by_networkx(lines, _, params):
    """`connected_components` by networkx: a graph of the rows and their line parts' end
    points (rounded to 6 decimals), its connected components numbered by their rows (most
    first, then by first row); rows without a line part −1 and 0."""
    import networkx as nx

    graph = nx.Graph()
    for row, shape in enumerate(lines.geometry):
        parts = [] if shape is None or shape.is_empty else getattr(shape, "geoms", [shape])
        for part in parts:
            if part.geom_type == "LineString" and len(part.coords) >= 2:
                for x, y in (part.coords[0], part.coords[-1]):
                    graph.add_edge(("row", row), ("end", round(x, 6), round(y, 6)))
    parts = [sorted(n[1] for n in c if n[0] == "row") for c in nx.connected_components(graph)]
    parts.sort(key=lambda rows: (-len(rows), rows[0]))
    number, size = [-1] * len(lines), [0] * len(lines)
    for k, rows in enumerate(parts):
        for row in rows:
            number[row], size[row] = k, len(rows)
    answer = lines.copy()
    answer[params.get("component_col", "component_id")] = number
    answer[params.get("size_col", "component_size")] = size
    return answer


def gispulse_graph(lines, params, reproject=True):
    """GISPulse's networkx `Graph` of `lines` (with `reproject`, in `crs_meters` when they are
    in lon/lat): ends rounded to 6 decimals, numbered by first appearance, the last part
    between two nodes weighted by its length or its `weight_col` value; with each row's end
    nodes."""
    import networkx as nx

    crs = params.get("crs_meters", "EPSG:3857")
    angular = reproject and lines.crs is not None and not lines.crs.is_projected
    work = lines.to_crs(crs) if angular else lines
    weights = lines[params["weight_col"]].tolist() if params.get("weight_col") else None
    graph, number, row_nodes = nx.Graph(), {}, []
    for row, shape in enumerate(work.geometry):
        parts = [] if shape is None or shape.is_empty else getattr(shape, "geoms", [shape])
        ends = []
        for part in parts:
            if part.geom_type != "LineString" or len(part.coords) < 2:
                continue
            pair = []
            for x, y in (part.coords[0], part.coords[-1]):
                key = (round(x, 6), round(y, 6))
                pair.append(number.setdefault(key, len(number)))
                graph.add_node(pair[-1])
            weight = part.length if weights is None else float(weights[row])
            graph.add_edge(pair[0], pair[1], weight=weight, part=part)
            ends.extend(pair)
        row_nodes.append(ends)
    return graph, number, row_nodes, work, angular


def communities_by_networkx(lines, _, params):
    """`community_detection` (greedy_modularity) by networkx's
    `greedy_modularity_communities` over GISPulse's graph; a row's community when all its
    ends share one, else −1."""
    from networkx.algorithms.community import greedy_modularity_communities

    graph, _, row_nodes, _, _ = gispulse_graph(lines, params)
    found = greedy_modularity_communities(graph, weight="weight")
    community = {node: k for k, nodes in enumerate(found) for node in nodes}
    labels = []
    for ends in row_nodes:
        seen = {community[node] for node in ends}
        labels.append(seen.pop() if len(seen) == 1 else -1)
    answer = lines.copy()
    answer[params.get("community_col", "community_id")] = labels
    return answer


def steiner_by_networkx(lines, terminals, params):
    """`steiner_tree` by networkx: GISPulse's graph of the lines (ends rounded to 6 decimals,
    numbered by first appearance, the last part between two nodes; lengths in `crs_meters`
    for lon/lat lines), each terminal on its nearest node, networkx's Mehlhorn tree over the
    part of the network holding the first terminal; rows `u < v`, `weight`, the part."""
    import networkx as nx

    crs = params.get("crs_meters", "EPSG:3857")
    angular = lines.crs is not None and not lines.crs.is_projected
    work = lines.to_crs(crs) if angular else lines
    places = terminals.to_crs(crs) if angular and terminals.crs is not None else terminals
    graph, number = nx.Graph(), {}
    for shape in work.geometry:
        parts = [] if shape is None or shape.is_empty else getattr(shape, "geoms", [shape])
        for part in parts:
            if len(part.coords) < 2:
                continue
            ends = []
            for x, y in (part.coords[0], part.coords[-1]):
                key = (round(x, 6), round(y, 6))
                ends.append(number.setdefault(key, len(number)))
                graph.add_node(ends[-1], point=key)
            graph.add_edge(ends[0], ends[1], weight=part.length, part=part)
    keys = np.array(list(number.keys()))
    chosen = []
    for shape in places.geometry:
        if shape is None or shape.is_empty:
            continue
        point = shape if shape.geom_type == "Point" else shape.centroid
        node = int(np.argmin((keys[:, 0] - point.x) ** 2 + (keys[:, 1] - point.y) ** 2))
        if node not in chosen:
            chosen.append(node)
    linked = graph.subgraph(nx.node_connected_component(graph, chosen[0])).copy()
    tree = nx.algorithms.approximation.steiner_tree(linked, chosen, weight="weight", method="mehlhorn")
    rows = sorted((min(u, v), max(u, v), data["weight"], data["part"]) for u, v, data in tree.edges(data=True))
    answer = gpd.GeoDataFrame({"u": [r[0] for r in rows], "v": [r[1] for r in rows], "weight": [r[2] for r in rows]},
                              geometry=[r[3] for r in rows], crs=work.crs)
    return answer.to_crs(lines.crs) if angular else answer


def mst_by_networkx(lines, _, params):
    """`mst` by networkx's `minimum_spanning_tree` (Kruskal) over GISPulse's graph in the
    lines' own units: rows `u < v`, `weight`, the part."""
    import networkx as nx

    graph, _, _, work, _ = gispulse_graph(lines, params, reproject=False)
    tree = nx.minimum_spanning_tree(graph, weight="weight")
    rows = [(min(u, v), max(u, v), data["weight"], data["part"]) for u, v, data in tree.edges(data=True)]
    return gpd.GeoDataFrame({"u": [r[0] for r in rows], "v": [r[1] for r in rows], "weight": [r[2] for r in rows]},
                            geometry=[r[3] for r in rows], crs=work.crs)


def connectivity_by_networkx(lines, _, params):
    """`connectivity_check` by networkx over GISPulse's graph: one row of statistics, or with
    `return_components` a row per connected part (most nodes first), each with the convex
    hull of the union of its edges' parts (Shapely)."""
    import networkx as nx

    graph, _, _, work, _ = gispulse_graph(lines, params, reproject=False)

    def hull(subgraph):
        parts = [data["part"] for _, _, data in subgraph.edges(data=True)]
        return shapely.union_all(parts).convex_hull if parts else None

    parts = list(nx.connected_components(graph))
    if params.get("return_components"):
        ordered = sorted(parts, key=lambda nodes: -len(nodes))
        subgraphs = [graph.subgraph(nodes) for nodes in ordered]
        return gpd.GeoDataFrame({"component_id": list(range(len(ordered))),
                                 "n_nodes": [s.number_of_nodes() for s in subgraphs],
                                 "n_edges": [s.number_of_edges() for s in subgraphs],
                                 "is_largest": [k == 0 for k in range(len(ordered))]},
                                geometry=[hull(s) for s in subgraphs], crs=work.crs)
    largest = max((graph.subgraph(nodes).number_of_edges() for nodes in parts), default=0)
    return gpd.GeoDataFrame({"is_connected": [nx.is_connected(graph)], "n_components": [len(parts)],
                             "n_nodes": [graph.number_of_nodes()], "n_edges": [graph.number_of_edges()],
                             "largest_component": [largest]},
                            geometry=[hull(graph)], crs=work.crs)


def shortest_path_by_networkx(lines, _, params):
    """`shortest_path` by networkx's `shortest_path` (bidirectional Dijkstra) over GISPulse's
    graph, between the nodes nearest the start and end points (Shapely distances): a row per
    edge, `path_order` from 0 and the edge's part."""
    import networkx as nx

    graph, number, _, work, angular = gispulse_graph(lines, params)
    points = [shapely.Point(key) for key in number]

    def nearest(x, y):
        here = shapely.Point(x, y)
        return min(range(len(points)), key=lambda n: here.distance(points[n]))

    start = nearest(params.get("start_x", 0.0), params.get("start_y", 0.0))
    end = nearest(params.get("end_x", 0.0), params.get("end_y", 0.0))
    nodes = nx.shortest_path(graph, start, end, weight="weight") if start != end else [start]
    parts = [graph.edges[u, v]["part"] for u, v in zip(nodes, nodes[1:])]
    answer = gpd.GeoDataFrame({"path_order": list(range(len(parts)))}, geometry=parts, crs=work.crs)
    return answer.to_crs(lines.crs) if angular else answer


def isochrone_by_networkx(lines, _, params):
    """`isochrone` from a point by networkx's `multi_source_dijkstra_path_length` over
    GISPulse's graph in the lines' own units: an edge is reached when either node is within the
    budget; a row per budget with the Shapely union of the reached edges buffered by
    `max(edge_buffer_m, 1)`, or with `dissolve` false a row per reached edge and its cost."""
    import networkx as nx

    graph, number, _, work, _ = gispulse_graph(lines, params, reproject=False)
    points = [shapely.Point(key) for key in number]
    here = shapely.Point(params.get("start_x", 0.0), params.get("start_y", 0.0))
    start = min(range(len(points)), key=lambda n: here.distance(points[n]))
    budgets = sorted({float(b) for b in params.get("cost_budgets") or [params.get("cost_budget", 1000.0)]})
    costs = nx.multi_source_dijkstra_path_length(graph, {start}, cutoff=budgets[-1], weight="weight")

    def reached(budget):
        within = {n for n, c in costs.items() if c <= budget}
        return [(data["part"], data["weight"]) for u, v, data in graph.edges(data=True) if u in within or v in within]

    if not params.get("dissolve", True):
        edges = reached(budgets[0])
        return gpd.GeoDataFrame({"cost": [c for _, c in edges]}, geometry=[p for p, _ in edges], crs=work.crs)
    width = max(params.get("edge_buffer_m", 30.0), 1.0)
    rows = [(b, shapely.union_all([p.buffer(width) for p, _ in reached(b)])) for b in budgets if reached(b)]
    return gpd.GeoDataFrame({"cost_budget": [b for b, _ in rows]}, geometry=[g for _, g in rows], crs=work.crs)


def od_matrix_by_networkx(lines, points, params):
    """`od_matrix` by networkx's `single_source_dijkstra` (with `max_distance` as cutoff) over
    GISPulse's graph in the lines' own units, between every two rows of the reference layer
    placed on their nearest nodes (Shapely distances): rows origin-major, ids by
    `origin_id_col` or by position, the path's edges merged into one line, each edge turned to
    start at the node it leaves; `include_missing` adds each row with itself and the pairs not
    reached, with the origin's geometry."""
    import networkx as nx

    graph, number, _, _, _ = gispulse_graph(lines, params, reproject=False)
    keys = list(number)
    nodes = [shapely.Point(key) for key in keys]

    def nearest(shape):
        if shape is None or shape.is_empty:
            return None
        here = shape if shape.geom_type == "Point" else shape.centroid
        return min(range(len(nodes)), key=lambda n: here.distance(nodes[n]))

    places = [nearest(shape) for shape in points.geometry]
    id_col = params.get("origin_id_col")
    ids = list(points[id_col]) if id_col else list(range(len(points)))
    missing = params.get("include_missing", False)
    rows = []
    for i, start in enumerate(places):
        own = points.geometry.iloc[i]
        lengths, paths = ({}, {}) if start is None else nx.single_source_dijkstra(
            graph, start, weight="weight", cutoff=params.get("max_distance"))
        for j, end in enumerate(places):
            if i == j:
                if missing:
                    rows.append((ids[i], ids[j], 0.0, 0, own))
                continue
            if end is not None and end in lengths:
                path = paths[end]
                coords = []
                for u, v in zip(path, path[1:]):
                    part = list(graph.edges[u, v]["part"].coords)
                    if math.dist(part[-1], keys[u]) < math.dist(part[0], keys[u]):
                        part.reverse()
                    for c in part:
                        if not coords or coords[-1] != c:
                            coords.append(c)
                shape = shapely.LineString(coords) if len(path) > 1 else own
                rows.append((ids[i], ids[j], float(lengths[end]), len(path) - 1, shape))
            elif missing:
                rows.append((ids[i], ids[j], None, 0, own))
    return gpd.GeoDataFrame(rows, columns=["origin_id", "destination_id", "cost", "n_edges", "geometry"],
                            geometry="geometry", crs=lines.crs)


def allocation_by_networkx(points, _, params):
    """`network_allocation` by networkx's `single_source_dijkstra_path_length` from each hub
    (with `max_cost` as cutoff) over GISPulse's graph of `network_gdf`, every layer in
    `crs_meters` when in lon/lat: hubs and points at their nearest nodes (Shapely distances,
    a centroid for other geometries), each node kept by the first hub at its least cost; hubs
    named by `hub_id_col` (else their row position)."""
    import networkx as nx

    graph, number, _, _, _ = gispulse_graph(params["network_gdf"], params)
    crs = params.get("crs_meters", "EPSG:3857")
    nodes = [shapely.Point(key) for key in number]

    def metric(layer):
        return layer.to_crs(crs) if layer.crs is not None and not layer.crs.is_projected else layer

    def nearest(shape):
        if shape is None or shape.is_empty or not nodes:
            return None
        here = shape if shape.geom_type == "Point" else shape.centroid
        return min(range(len(nodes)), key=lambda n: here.distance(nodes[n]))

    hubs = metric(params["hubs_gdf"])
    id_col = params.get("hub_id_col", "id")
    best = {}
    for row, shape in enumerate(hubs.geometry):
        start = nearest(shape)
        if start is None:
            continue
        hub = hubs[id_col].iloc[row] if id_col in hubs.columns else row
        lengths = nx.single_source_dijkstra_path_length(
            graph, start, cutoff=params.get("max_cost"), weight="weight")
        for node, cost in lengths.items():
            if node not in best or cost < best[node][1]:
                best[node] = (hub, cost)
    found = [best.get(nearest(shape)) for shape in metric(points).geometry]
    answer = points.copy()
    answer["allocated_hub_id"] = [f[0] if f else None for f in found]
    answer["allocation_cost"] = [f[1] if f else math.nan for f in found]
    answer["allocated"] = [f is not None for f in found]
    return answer


def hdbscan_by_scikit_learn(layer, _, params):
    """`cluster_hdbscan` by scikit-learn's HDBSCAN pipeline (`mst_from_data_matrix`,
    `tree_to_labels`: labels and probabilities) on the centroids in `crs_meters`, with the tie
    rule geomill documents (equal spanning-tree weights in Prim's order): `HDBSCAN().fit` sorts
    them with a plain `np.argsort`, whose tie order differs from CPU to CPU."""
    from sklearn.cluster._hdbscan._linkage import make_single_linkage, mst_from_data_matrix
    from sklearn.cluster._hdbscan._tree import tree_to_labels
    from sklearn.metrics import DistanceMetric
    from sklearn.neighbors import NearestNeighbors

    work = layer.to_crs(params.get("crs_meters", "EPSG:3857")) if layer.crs is not None else layer
    centres = work.geometry.centroid
    X = np.ascontiguousarray(np.column_stack([centres.x, centres.y]), dtype=np.float64)
    size = params.get("min_cluster_size", 5)
    samples = params.get("min_samples") or size
    metric = DistanceMetric.get_metric("euclidean")
    _, neighbours = NearestNeighbors(n_neighbors=samples).fit(X).kneighbors(X, samples)
    far = X[neighbours[:, -1]]
    core = np.array([metric.pairwise(X[i:i + 1], far[i:i + 1])[0, 0] for i in range(len(X))])
    tree = mst_from_data_matrix(X, core, metric, 1.0)
    tree = tree[np.argsort(tree["distance"], kind="stable")]
    labels, probabilities = tree_to_labels(make_single_linkage(tree), size, "eom", False, 0.0, None)
    answer = layer.copy()
    answer[params.get("cluster_col", "cluster")] = labels.astype(np.int64)
    if params.get("probability_col", "cluster_probability"):
        answer[params.get("probability_col", "cluster_probability")] = probabilities.astype(float)
    return answer


# The independent definitions of capabilities: for the cases GISPulse answers wrongly
# (`gispulse_wrong`), and for the cases checked against a library too (`reference`).
REFERENCES = {"line_locate_point": locate_along_nearest_line,
              "connected_components": components_by_networkx,
              "steiner_tree": steiner_by_networkx,
              "community_detection": communities_by_networkx,
              "mst": mst_by_networkx,
              "connectivity_check": connectivity_by_networkx,
              "shortest_path": shortest_path_by_networkx,
              "cluster_hdbscan": hdbscan_by_scikit_learn,
              "isochrone": isochrone_by_networkx,
              "od_matrix": od_matrix_by_networkx,
              "network_allocation": allocation_by_networkx}


def reference_answer(case, layers):
    """A `gispulse_wrong` case's answer by its definition: GISPulse runs every step but the
    last, which `REFERENCES` computes on the layers those steps give."""
    document = case["document"]
    last = document["steps"][-1]
    head = dict(document, steps=document["steps"][:-1])
    frame = read_layer(layers[case["input"]])
    refs = {name: read_layer(path) for name, path in layers.items()}
    if head["steps"]:
        with contextlib.redirect_stdout(sys.stderr):
            named = run_gispulse(head, frame.copy(), {k: v.copy() for k, v in refs.items()}, every_step=True)
    else:  # GISPulse refuses a pipeline of no step: the last step reads the layers themselves
        named = dict(refs, input=frame)
    params = last.get("params", last.get("config", {}))
    # geomill's form of network_allocation names its network and hubs layers (`*_gdf`).
    params = dict(params, **{key: named[value] for key, value in params.items()
                             if key.endswith("_gdf") and isinstance(value, str)})
    reference = named.get(params.get("ref_layer"))
    answer = REFERENCES[last["capability"]](named[last.get("input", "input")], reference, params)
    return gpd.GeoDataFrame(answer).rename_geometry("geom")


def comparable(value):
    """A cell as compared: numbers as floats, missing as None, the rest as text."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return str(value)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-9)
    if isinstance(a, float) != isinstance(b, float):
        # GISPulse writes mixed columns as text ("1.5"): compare as numbers when both are.
        try:
            return math.isclose(float(a), float(b), rel_tol=TOLERANCE, abs_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return a == b


def sort_key(value):
    """A cell's place in the rows' order: missing first, then numbers by value (to 6
    significant digits, and 0 below the comparison's absolute tolerance, so that the last bits
    two libraries differ in do not reorder the rows), then text."""
    value = comparable(value)
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, (bool, float)):
        number = float(value)
        return (1, 0.0 if abs(number) < 1e-9 else float(f"{number:.6g}"), "")
    return (2, 0.0, value)


def ordered(frame, key):
    """Rows in a defined order: by the key columns, else by every attribute; rows equal there
    (or a layer of geometries only) by where each geometry lies and its size."""
    columns = [c for c in (key or frame.columns) if c != "geom" and c in frame.columns]
    if frame.empty:
        return frame.reset_index(drop=True)
    if "geom" in frame.columns:
        shapes = gpd.GeoSeries(frame["geom"])
        centres = shapes.centroid
        place = list(zip(centres.x.fillna(0).to_numpy().round(6), centres.y.fillna(0).to_numpy().round(6),
                         (shapes.area + shapes.length).fillna(0).to_numpy().round(6)))
    else:
        place = [()] * len(frame)
    sortable = frame[columns].map(sort_key)
    order = sorted(range(len(frame)), key=lambda i: (tuple(sortable.iloc[i]), place[i]))
    return frame.iloc[order].reset_index(drop=True)


def geometry_gap(a, b, scale_area, scale_length):
    """How far apart two geometries are, relative to the layer's extent."""
    if a is None or b is None:
        return 0.0 if (a is None) == (b is None) else math.inf
    if a.is_empty or b.is_empty:
        return 0.0 if a.is_empty == b.is_empty else math.inf
    if a.area > 0 or b.area > 0:
        return shapely.symmetric_difference(shapely.make_valid(a), shapely.make_valid(b)).area / scale_area
    return shapely.hausdorff_distance(a, b) / scale_length


def compare(label, case, theirs, ours):
    problems = []
    if "geom" in theirs.columns and "geom" not in ours.columns and theirs["geom"].isna().all():
        # A report GISPulse gives a geometry column of NULLs only: geomill writes none.
        theirs = theirs.drop(columns=["geom"])
    their_columns = [c for c in theirs.columns]
    our_columns = [c for c in ours.columns]
    if sorted(their_columns) != sorted(our_columns):
        return [f"{label}: columns differ: GISPulse {their_columns}, geomill {our_columns}"]
    if len(theirs) != len(ours):
        return [f"{label}: {len(theirs)} rows from GISPulse, {len(ours)} from geomill"]
    key = case.get("key")
    theirs, ours = ordered(theirs, key), ordered(ours, key)
    has_geometry = "geom" in theirs.columns
    if has_geometry:
        bounds = gpd.GeoSeries(theirs["geom"]).total_bounds
        width, height = bounds[2] - bounds[0], bounds[3] - bounds[1]
        diagonal = math.hypot(width, height) or 1.0
        area = (width * height) or diagonal * diagonal
    for column in their_columns:
        for i, (a, b) in enumerate(zip(theirs[column], ours[column])):
            if column == "geom":
                gap = geometry_gap(a, b, area, diagonal)
                if not gap <= TOLERANCE:
                    problems.append(f"{label}: row {i} geometry differs by {gap:.3g} of the extent")
                    break
            elif not same(comparable(a), comparable(b)):
                problems.append(f"{label}: row {i} column {column}: GISPulse {a!r}, geomill {b!r}")
                break
    return problems


def our_answer(path):
    """geomill's answer, written to `path`, with its geometry column named `geom`."""
    ours = gpd.read_file(path) if path.endswith((".gpkg", ".parquet", ".geojson")) else pd.read_parquet(path)
    if "geometry" in ours.columns and "geom" not in ours.columns and isinstance(ours, gpd.GeoDataFrame):
        ours = ours.rename_geometry("geom")
    return ours


def main():
    manifest = json.load(open(sys.argv[1]))
    layers = json.load(open(sys.argv[2]))
    problems, cases = [], set()
    for entry in manifest:
        case = json.load(open(entry["case"]))
        label = f"{os.path.basename(entry['case'])} on {entry['engine']}"
        cases.add(entry["case"])
        try:
            # GISPulse's Pro capabilities do not run without its licence: the reference only.
            alone = case.get("gispulse_unavailable") or case.get("reference_only")
            theirs = reference_answer(case, layers) if alone else gispulse_answer(case, layers)
        except Exception as error:  # GISPulse itself failed: the case is wrong
            problems.append(f"{label}: GISPulse fails: {type(error).__name__}: {error}")
            continue
        if case.get("gispulse_wrong"):
            reference = reference_answer(case, layers)
            if not compare(label, case, pd.DataFrame(theirs), pd.DataFrame(reference)):
                problems.append(f"{label}: GISPulse equals the reference now: remove gispulse_wrong")
            theirs = reference
        ours = our_answer(entry["result"])
        if case.get("reference") and not case.get("gispulse_wrong"):
            reference = pd.DataFrame(reference_answer(case, layers))
            problems.extend(compare(f"{label} against the reference", case, reference, pd.DataFrame(ours)))
        if len(theirs) == 0 and not case.get("empty"):  # equal empty answers prove nothing
            problems.append(f"{label}: GISPulse answers no rows: the case tests nothing")
            continue
        found = compare(label, case, pd.DataFrame(theirs), pd.DataFrame(ours))
        why = (case.get("differs_on") or {}).get(entry["engine"])
        if why and found:
            print(f"KNOWN {found[0]} ({why})")
        elif why:
            problems.append(f"{label}: equal to GISPulse now: remove {entry['engine']} from differs_on")
        else:
            problems.extend(found)
    print("\n".join(problems) or f"compared {len(manifest)} answers of {len(cases)} cases")


main()
