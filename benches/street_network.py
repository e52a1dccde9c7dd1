"""A street-like line layer for the line network cleaning tests and benchmarks, from a seed.

`python benches/street_network.py OUT.gpkg [--size N] [--seed S]` writes layer `streets`
(EPSG:3857, metres): a jittered N x N grid of blocks 100 m wide. East-west streets are cut
into one feature per block; some blocks are drawn short of the next junction (undershoots of
2 to 6 m), some end up to 0.8 m off it (near misses), some are split in two at a pseudo node,
some are drawn twice (the copy reversed, other attributes). North-south streets are one
feature per column through every junction (junctions as vertices, not ends), and two long
diagonals cross everything without a vertex where they cross. Attributes: `sid` (unique
integer), `kind` (text, some NULL), `name` (text). One NULL and one empty geometry close the
layer. Same seed, same file.
"""

import argparse
import random

import geopandas as gpd
from shapely.geometry import LineString


def streets(size, seed):
    rng = random.Random(seed)
    step, x0, y0 = 100.0, 500000.0, 4000000.0
    node = {
        (i, j): (x0 + i * step + rng.uniform(-15, 15), y0 + j * step + rng.uniform(-15, 15))
        for i in range(size + 1)
        for j in range(size + 1)
    }
    rows = []

    def add(coords, kind):
        n = len(rows) + 1
        geometry = None if coords is None else LineString(coords)
        rows.append({"sid": n, "kind": kind, "name": f"street {n}", "geometry": geometry})

    for j in range(size + 1):
        for i in range(size):
            a, b = node[(i, j)], node[(i + 1, j)]
            kind = "primary" if j % 4 == 0 else ("residential" if rng.random() < 0.9 else None)
            r = rng.random()
            if r < 0.12:
                t = rng.uniform(0.02, 0.06)
                b = (b[0] - (b[0] - a[0]) * t, b[1] - (b[1] - a[1]) * t)
                add([a, b], kind)
            elif r < 0.22:
                b = (b[0] + rng.uniform(-0.8, 0.8), b[1] + rng.uniform(-0.8, 0.8))
                add([a, b], kind)
            elif r < 0.40:
                m = ((a[0] + b[0]) / 2 + rng.uniform(-5, 5), (a[1] + b[1]) / 2 + rng.uniform(-5, 5))
                add([a, m], kind)
                add([m, b], kind if rng.random() < 0.8 else "service")
            else:
                add([a, b], kind)
            if rng.random() < 0.06:
                add([b, a], "copy")
    for i in range(size + 1):
        add([node[(i, j)] for j in range(size + 1)], "avenue")
    add([node[(0, 0)], (x0 + size * step * 0.5 + 3.3, y0 + size * step * 0.47), node[(size, size)]], "diagonal")
    add([(x0 - 20, y0 + size * step * 0.9), (x0 + size * step + 20, y0 + size * step * 0.13)], "diagonal")
    add(None, "nothing")
    rows.append({"sid": len(rows) + 1, "kind": "empty", "name": "empty", "geometry": LineString()})
    return gpd.GeoDataFrame(rows, geometry="geometry", crs="EPSG:3857")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size", type=int, default=12)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    streets(args.size, args.seed).to_file(args.out, layer="streets", driver="GPKG")
