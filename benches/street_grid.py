"""A street network for the network analyses' tests and benchmarks, generated from a fixed seed.

`python benches/street_grid.py OUT_DIR [--size N] [--points P]` writes, in UTM zone 18N
(EPSG:32618, metres, around New York):

- `streets.gpkg`, layer `streets`: an N x N grid of crossings about 100 m apart, jittered by up to
  20 m, joined by streets to their right and upper neighbours (at the default N = 160, 50,880
  blocks less the 1% removed: about 50,370 streets). One street in four bends through a middle
  vertex; rows 0, 4, 8, ... run one-way east (`oneway` = 'yes'), rows 2, 6, ... one-way west
  ('-1', digitised eastward), columns 0, 5, 10, ... one-way north (`oneway` = 'YES', upper
  case), the rest both ways ('no' or NULL). Fields: `id` (integer), `oneway` (text),
  `minutes` (double: travel time at a per-street speed; a few NULL, which leave the street out
  of a graph weighed by minutes). A separate 3 x 3 block island lies east of the grid (its own
  connected part); two rows have a NULL geometry and one an empty line; one street is a
  two-part MultiLineString (its parts are separate edges).
- `origins.gpkg` and `destinations.gpkg`: P points each (default 1,000) inside the grid, with an
  integer `id`; the origins have one NULL geometry more (id -1).

Same seed, same files.
"""

import argparse
import os

import geopandas as gpd
import numpy as np
import shapely

CRS = "EPSG:32618"
X0, Y0, STEP = 580000.0, 4500000.0, 100.0


def grid(size, rng):
    jitter = rng.uniform(-20.0, 20.0, size=(size, size, 2))
    xs = X0 + np.arange(size)[:, None] * STEP + jitter[:, :, 0]
    ys = Y0 + np.arange(size)[None, :] * STEP + jitter[:, :, 1]
    return xs, ys


def street(a, b, bend, rng):
    if bend:
        mid = ((a[0] + b[0]) / 2 + rng.uniform(-15, 15), (a[1] + b[1]) / 2 + rng.uniform(-15, 15))
        return shapely.LineString([a, mid, b])
    return shapely.LineString([a, b])


def streets(size, rng):
    xs, ys = grid(size, rng)
    rows = []
    for i in range(size):
        for j in range(size):
            a = (xs[i, j], ys[i, j])
            if i + 1 < size:  # eastward along row j
                oneway = "yes" if j % 4 == 0 else ("-1" if j % 4 == 2 else ("no" if j % 2 else None))
                rows.append((a, (xs[i + 1, j], ys[i + 1, j]), oneway))
            if j + 1 < size:  # northward along column i
                rows.append((a, (xs[i, j + 1], ys[i, j + 1]), "YES" if i % 5 == 0 else "no"))
    keep = rng.random(len(rows)) >= 0.01
    out = []
    for (a, b, oneway), kept in zip(rows, keep):
        if kept:
            line = street(a, b, rng.random() < 0.25, rng)
            speed = rng.choice([25.0, 40.0, 50.0])  # km/h
            minutes = line.length / 1000.0 / speed * 60.0
            out.append({"oneway": oneway, "minutes": minutes, "geometry": line})
    # An island of 3 x 3 blocks east of the grid.
    ix = X0 + (size + 5) * STEP
    for i in range(4):
        for j in range(4):
            a = (ix + i * STEP, Y0 + j * STEP)
            if i < 3:
                out.append({"oneway": "no", "minutes": 0.2, "geometry": shapely.LineString([a, (a[0] + STEP, a[1])])})
            if j < 3:
                out.append({"oneway": "no", "minutes": 0.2, "geometry": shapely.LineString([a, (a[0], a[1] + STEP)])})
    for k in rng.choice(len(out), size=5, replace=False):
        out[k]["minutes"] = None
    # A street in two parts: each part its own edge.
    first, second = out[10]["geometry"], out[11]["geometry"]
    out[10]["geometry"] = shapely.MultiLineString([first, second])
    out.append({"oneway": "no", "minutes": 1.0, "geometry": None})
    out.append({"oneway": "no", "minutes": 1.0, "geometry": shapely.LineString()})
    out.append({"oneway": None, "minutes": None, "geometry": None})
    frame = gpd.GeoDataFrame(out, geometry="geometry", crs=CRS)
    frame.insert(0, "id", np.arange(1, len(frame) + 1, dtype="int64"))
    return frame


def points(count, size, rng, with_null):
    span = (size - 1) * STEP
    xy = rng.uniform([X0, Y0], [X0 + span, Y0 + span], size=(count, 2))
    frame = gpd.GeoDataFrame(
        {"id": np.arange(1, count + 1, dtype="int64")},
        geometry=gpd.points_from_xy(xy[:, 0], xy[:, 1]),
        crs=CRS,
    )
    if with_null:
        frame.loc[len(frame)] = {"id": -1, "geometry": None}
    return frame


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size", type=int, default=160)
    parser.add_argument("--points", type=int, default=1000)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(20261126)
    lines = streets(args.size, rng)
    lines.to_file(os.path.join(args.out, "streets.gpkg"), layer="streets", driver="GPKG")
    points(args.points, args.size, rng, True).to_file(
        os.path.join(args.out, "origins.gpkg"), layer="origins", driver="GPKG"
    )
    points(args.points, args.size, rng, False).to_file(
        os.path.join(args.out, "destinations.gpkg"), layer="destinations", driver="GPKG"
    )
    print(len(lines))


if __name__ == "__main__":
    main()
