"""A lidar tile end to end, geomill against laspy + NumPy, whole processes in one run
(`make bench-pointcloud`).

`python benches/pointcloud.py GEOMILL_BINARY [--points N] [--runs R]`: a seeded LAZ of N points
(default 50,000,000) over a 2 km x 2 km tile in UTM 18N (`scripts/generate_pointcloud.py`:
ground, buildings, trees), then load, keep the ground (class 2) and summarise it on a 1 m grid
(mean height and count per occupied cell, each cell's square), written as GeoParquet:

- geomill: `geomill run` of `pointcloud_filter_classification` then `pointcloud_grid_summary`
  with the LAZ as its input and `--output cells.parquet` (the default embedded engine);
- the peer: laspy 2.7 (lazrs) reads the whole file, NumPy keeps the ground and finds each
  point's cell (floor division from the minimum corner), pandas groups, Shapely makes the
  squares, GeoPandas writes the GeoParquet.

The answers are compared first (the same cells; counts equal, means to 1e-9 relative). Times
are medians of R wall-clock runs of fresh processes; peak memory is each process's maximum
resident set (`/usr/bin/time`).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOUNDS = ["583000", "4506000", "585000", "4508000"]

PEER = r"""
import sys
import numpy as np, pandas as pd, geopandas as gpd, laspy, shapely
las = laspy.read(sys.argv[1])
ground = np.asarray(las.classification) == 2
x, y, z = np.asarray(las.x)[ground], np.asarray(las.y)[ground], np.asarray(las.z)[ground]
x0, y0 = x.min(), y.min()
col = ((x - x0) // 1.0).astype(np.int64)
row = ((y - y0) // 1.0).astype(np.int64)
cells = (pd.DataFrame({"row": row, "col": col, "z": z}).groupby(["row", "col"])["z"]
         .agg(z_mean="mean", z_count="count").reset_index())
left, bottom = x0 + cells["col"].to_numpy() * 1.0, y0 + cells["row"].to_numpy() * 1.0
squares = shapely.box(left, bottom, left + 1.0, bottom + 1.0)
gpd.GeoDataFrame(cells, geometry=squares, crs=las.header.parse_crs()).to_parquet(sys.argv[2])
"""

COMPARE = r"""
import sys
import numpy as np, pandas as pd
a = pd.read_parquet(sys.argv[1]).sort_values(["row", "col"]).reset_index(drop=True)
b = pd.read_parquet(sys.argv[2]).sort_values(["row", "col"]).reset_index(drop=True)
assert len(a) == len(b), (len(a), len(b))
assert (a["row"].to_numpy() == b["row"].to_numpy()).all() and (a["col"].to_numpy() == b["col"].to_numpy()).all()
assert (a["z_count"].to_numpy() == b["z_count"].to_numpy()).all()
assert np.allclose(a["z_mean"], b["z_mean"], rtol=1e-9, atol=0)
print(len(a))
"""

PIPELINE = """{"name": "ground_grid", "steps": [
 {"id": "ground", "capability": "pointcloud_filter_classification", "params": {"keep": [2]}},
 {"id": "cells", "capability": "pointcloud_grid_summary",
  "params": {"cell_size": 1.0, "stats": ["mean", "count"]}}]}"""


def timed(command, cwd):
    """Wall-clock seconds and peak resident MiB of a whole process."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, cwd=cwd,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed: {done.stderr[-2000:]}")
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return seconds, peak_kib / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("geomill")
    parser.add_argument("--points", type=int, default=50_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        cloud = os.path.join(work, "tile.laz")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "generate_pointcloud.py"),
                        cloud, "--bounds", *BOUNDS, "--points", str(args.points), "--seed", "11",
                        "--epsg", "32618"], check=True)
        pipeline = os.path.join(work, "grid.json")
        with open(pipeline, "w") as f:
            f.write(PIPELINE)
        ours, theirs = os.path.join(work, "cells.parquet"), os.path.join(work, "peer.parquet")
        runs = {"geomill": [], "laspy + NumPy": []}
        for _ in range(args.runs):
            runs["geomill"].append(timed([args.geomill, "run", pipeline, "--input", cloud,
                                          "--output", ours], work))
            runs["laspy + NumPy"].append(timed([sys.executable, "-c", PEER, cloud, theirs], work))
        cells = subprocess.run([sys.executable, "-c", COMPARE, ours, theirs], check=True,
                               capture_output=True, text=True).stdout.strip()
        size = os.path.getsize(cloud) / 2**20
        print(f"{args.points:,} points ({size:.0f} MiB LAZ), ground on a 1 m grid: {cells} cells, "
              f"the same on both sides")
        print("| tool | median s | peak MiB |")
        print("|---|---|---|")
        medians = {}
        for tool, measured in runs.items():
            medians[tool] = statistics.median(s for s, _ in measured)
            peak = max(m for _, m in measured)
            print(f"| {tool} | {medians[tool]:.1f} | {peak:.0f} |")
        print(f"geomill is {medians['laspy + NumPy'] / medians['geomill']:.2f}x laspy + NumPy")


if __name__ == "__main__":
    main()
