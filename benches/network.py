"""The origin-destination matrix benchmark: 1,000 x 1,000 costs on the 50,000-street grid of
`street_grid.py`, computed by geomill natively and on PostGIS with pgRouting (both through
`geomill run`, end to end: files read, graph built, costs computed, a GeoPackage of the
million rows written) and by networkx (graph built from the same file, then one
`single_source_dijkstra_path_length` per origin; no file written), in one run. Then
`network_allocation` of every street to the first 200 destinations as facilities, natively and
with pgRouting (which searches from each facility), both checked against networkx's
`multi_source_dijkstra_path_length`.

Usage: python benches/network.py GEOMILL_BINARY [--runs N] [--work DIR]
(`make bench-network`; the pgRouting run needs GEOMILL_POSTGIS_DSN, as under
`scripts/with-postgis.sh`). Prints each tool's median wall time over the runs and the
ratios, and checks that the three agree on every cost (within 1e-9 relative).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import geopandas as gpd
import networkx as nx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


FACILITIES = 200


def pipeline(path, capability, params):
    document = {
        "name": capability,
        "steps": [{"id": "n", "capability": capability, "input": "streets", "params": params}],
    }
    with open(path, "w") as f:
        json.dump(document, f)


def geomill(binary, work, engine, name="od", inputs=("streets", "origins", "destinations")):
    out = os.path.join(work, f"{name}_{engine}.gpkg")
    if os.path.exists(out):
        os.remove(out)
    command = [binary, "run", os.path.join(work, f"{name}.json"), "--engine", engine, "--output", out]
    for layer in inputs:
        command += ["--input", f"{layer}={os.path.join(work, layer + '.gpkg')}"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"geomill --engine {engine} failed: {done.stderr[-2000:]}")
    return elapsed, out


def networkx_graph(streets):
    """(raw edges (a, b, cost, direction, row), node coordinates, DiGraph) of the streets."""
    raw = []
    for row, (oneway, geometry) in enumerate(zip(streets.oneway, streets.geometry)):
        if geometry is None or geometry.is_empty:
            continue
        parts = list(geometry.geoms) if geometry.geom_type == "MultiLineString" else [geometry]
        text = None if oneway is None else str(oneway).strip().lower()
        d = 1 if text in ("1", "true", "yes") else (-1 if text in ("-1", "reverse") else 0)
        for p in parts:
            c = p.coords
            raw.append((c[0][:2], c[-1][:2], p.length, d, row))
    nodes = sorted({r[0] for r in raw} | {r[1] for r in raw})
    number = {n: i for i, n in enumerate(nodes)}
    graph = nx.DiGraph()
    for a, b, cost, d, _ in raw:
        u, v = number[a], number[b]
        for s, t, allowed in ((u, v, d >= 0), (v, u, d <= 0)):
            if allowed and (not graph.has_edge(s, t) or graph[s][t]["weight"] > cost):
                graph.add_edge(s, t, weight=cost)
    return [(number[a], number[b], c, d, row) for a, b, c, d, row in raw], np.asarray(nodes), graph


def place(xy, frame):
    """Each point's nearest node (planar, ties to the lower number), or None."""
    out = []
    for g in frame.geometry:
        if g is None or g.is_empty:
            out.append(None)
            continue
        d = (xy[:, 0] - g.x) * (xy[:, 0] - g.x) + (xy[:, 1] - g.y) * (xy[:, 1] - g.y)
        out.append(int(np.argmin(d)))
    return out


def networkx_costs(work):
    start = time.perf_counter()
    streets = gpd.read_file(os.path.join(work, "streets.gpkg"))
    _, xy, graph = networkx_graph(streets)
    origins = gpd.read_file(os.path.join(work, "origins.gpkg"))
    destinations = gpd.read_file(os.path.join(work, "destinations.gpkg"))
    on, dn = place(xy, origins), place(xy, destinations)
    built = time.perf_counter()
    costs = {}
    for o, node in zip(origins.id, on):
        if node is None:
            continue
        lengths = nx.single_source_dijkstra_path_length(graph, node)
        for d, target in zip(destinations.id, dn):
            costs[(int(o), int(d))] = lengths.get(target)
    searched = time.perf_counter()
    return searched - start, searched - built, costs


def compare(path, reference, label):
    result = gpd.read_file(path, ignore_geometry=True)
    bad = 0
    for o, d, cost in zip(result.origin, result.destination, result.cost):
        if (int(o), int(d)) not in reference:
            continue
        want = reference[(int(o), int(d))]
        got = None if cost is None or np.isnan(cost) else float(cost)
        if (want is None) != (got is None) or (
            want is not None and abs(got - want) > 1e-9 * max(1.0, abs(want))
        ):
            bad += 1
    if bad:
        sys.exit(f"{label}: {bad} costs differ from networkx")
    return len(result)


def allocation_reference(work):
    """Each street row's least cost from any facility (networkx, every facility at once)."""
    streets = gpd.read_file(os.path.join(work, "streets.gpkg"))
    edges, xy, graph = networkx_graph(streets)
    facilities = gpd.read_file(os.path.join(work, "facilities.gpkg"))
    sources = {n for n in place(xy, facilities) if n is not None}
    dist = nx.multi_source_dijkstra_path_length(graph, sources)
    best = {}
    for u, v, c, d, row in edges:
        for node, allowed in ((u, d >= 0), (v, d <= 0)):
            if allowed and node in dist:
                best[row] = min(best.get(row, float("inf")), dist[node] + c)
    return streets.id.tolist(), best


def compare_allocation(path, ids, best, label):
    """Checks the costs against networkx; answers (id, facility) of every street."""
    result = gpd.read_file(path, ignore_geometry=True).set_index("id")
    bad = 0
    for row, street in enumerate(ids):
        want, got = best.get(row), result.cost[street]
        got = None if got is None or np.isnan(got) else float(got)
        if (want is None) != (got is None) or (want is not None and abs(got - want) > 1e-9 * max(1.0, want)):
            bad += 1
    if bad:
        sys.exit(f"{label}: {bad} allocation costs differ from networkx")
    return result.facility.fillna(-1).astype(int).to_dict()


def allocation(args, engines):
    destinations = gpd.read_file(os.path.join(args.work, "destinations.gpkg"))
    destinations.head(FACILITIES).to_file(os.path.join(args.work, "facilities.gpkg"), driver="GPKG")
    pipeline(os.path.join(args.work, "allocation.json"), "network_allocation",
             {"facilities": "facilities", "facility_id": "id", "oneway_field": "oneway"})
    times = {engine: [] for engine in engines}
    for _ in range(args.runs):
        for engine in engines:
            elapsed, _ = geomill(args.binary, args.work, engine, "allocation", ("streets", "facilities"))
            times[engine].append(elapsed)
    ids, best = allocation_reference(args.work)
    chosen = {e: compare_allocation(os.path.join(args.work, f"allocation_{e}.gpkg"), ids, best, e) for e in engines}
    if any(chosen[e] != chosen["native"] for e in engines):
        sys.exit("the engines allocate streets to different facilities")
    median = {engine: statistics.median(t) for engine, t in times.items()}
    print(f"network_allocation of {len(ids):,} streets to {FACILITIES} facilities, median of {args.runs} runs:")
    for engine in engines:
        label = "geomill native" if engine == "native" else "geomill postgis (pgRouting)"
        print(f"  {label:30} {median[engine]:7.2f} s  (end to end)")
    if "postgis" in median:
        print(f"  native vs pgRouting:              {median['postgis'] / median['native']:.1f}x faster")
    print("  every cost equal to networkx's within 1e-9 relative, the same facilities on every engine")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", default="/tmp/geomill-bench-network")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    subprocess.run(
        [sys.executable, os.path.join(HERE, "street_grid.py"), args.work, "--points", "1000"],
        check=True,
        capture_output=True,
    )
    pipeline(os.path.join(args.work, "od.json"), "od_matrix",
             {"origins": "origins", "origin_id": "id", "destinations": "destinations",
              "destination_id": "id", "oneway_field": "oneway"})
    engines = ["native"] + (["postgis"] if os.environ.get("GEOMILL_POSTGIS_DSN") else [])
    times = {engine: [] for engine in engines}
    nx_total, nx_search = [], []
    for _ in range(args.runs):
        for engine in engines:
            elapsed, out = geomill(args.binary, args.work, engine)
            times[engine].append(elapsed)
        total, search, reference = networkx_costs(args.work)
        nx_total.append(total)
        nx_search.append(search)
    rows = {engine: compare(os.path.join(args.work, f"od_{engine}.gpkg"), reference, engine) for engine in engines}
    median = {engine: statistics.median(t) for engine, t in times.items()}
    print(f"1,000 x 1,000 OD matrix on the street grid ({rows['native']:,} rows), median of {args.runs} runs:")
    for engine in engines:
        label = "geomill native" if engine == "native" else "geomill postgis (pgRouting)"
        print(f"  {label:30} {median[engine]:7.2f} s  (end to end: files in, GeoPackage out)")
    print(f"  {'networkx':30} {statistics.median(nx_total):7.2f} s  (of which searches {statistics.median(nx_search):.2f} s)")
    print(f"  native vs networkx searches only: {statistics.median(nx_search) / median['native']:.1f}x faster")
    if "postgis" in median:
        print(f"  native vs pgRouting:              {median['postgis'] / median['native']:.1f}x faster")
    print("  every cost equal to networkx's within 1e-9 relative")
    allocation(args, engines)


if __name__ == "__main__":
    main()
