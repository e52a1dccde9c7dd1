"""Zonal statistics of the real-shaped regions over a generated 20,000 x 20,000 float32 raster,
every tool a whole process measured in one run (`make bench-rasters`).

`python benches/rasters.py GEOMILL_BINARY [--size N] [--runs R]`: the regions of
`benches/real_layers.py` (3,209 polygons and multipolygons over the world, with holes, NULL and
empty geometries; fixed seeds) and a seeded N x N float32 GeoTIFF over the world in EPSG:4326
(tiled 512 x 512, uncompressed: 1.6 GB at N = 20,000; a smooth relief with noise, nodata
-9999 north of 80°). Each tool reads both files and computes, per region, count, min, max,
mean, sum and std:

- cells whose centre is inside: geomill `run --engine native` (`zonal_stats`), against
  rasterstats 0.21 (`zonal_stats` over the regions);
- cells weighted by the fraction covered: geomill (`coverage_weighted`), against exactextract
  0.3 (rasterio source, GeoPandas features).

Every answer is compared with its reference on every valid region (count exactly, the rest to
1e-6 relative: float32 cells; which cells an invalid, self-intersecting region holds is not
defined, and GDAL 3.6 and 3.10 burn some differently) before a time is printed. Times are medians of R wall-clock runs of fresh processes; peak
memory is the process's maximum resident set (`/usr/bin/time`).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import warnings

# GeoPandas warns that notna() no longer treats empty geometries as missing: both are tested.
warnings.filterwarnings("ignore", "GeoSeries.notna", UserWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
STATS = ["count", "min", "max", "mean", "sum", "std"]

RASTERSTATS = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import pyogrio
from rasterstats import zonal_stats
regions_path, raster, out = sys.argv[1:4]
frame = pyogrio.read_dataframe(regions_path)
frame = frame[~frame.geometry.is_empty & frame.geometry.notna()]
answers = zonal_stats(list(frame.geometry), raster, stats=["count", "min", "max", "mean", "sum", "std"])
json.dump({str(i): a for i, a in zip(frame["id"], answers)}, open(out, "w"))
"""

EXACTEXTRACT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import pyogrio, rasterio
from exactextract import exact_extract
from exactextract.raster import RasterioRasterSource
regions_path, raster, out = sys.argv[1:4]
frame = pyogrio.read_dataframe(regions_path)
# exactextract writes its own feature index into a column named `id`: the key travels as `region`.
frame = frame[~frame.geometry.is_empty & frame.geometry.notna()][["id", "geometry"]].rename(columns={"id": "region"})
with rasterio.open(raster) as src:
    answers = exact_extract(RasterioRasterSource(src, 1), frame,
                            ["count", "min", "max", "mean", "sum", "stdev"],
                            include_cols=["region"], output="pandas")
answers = answers.rename(columns={"stdev": "std"})
json.dump({str(r["region"]): {k: r[k] for k in ["count", "min", "max", "mean", "sum", "std"]}
           for r in answers.to_dict("records")}, open(out, "w"), default=float)
"""


def make_raster(path, size, seed=20261129):
    """A relief of a few sine waves with seeded noise, nodata north of 80°, written strip by strip."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_bounds
    from rasterio.windows import Window

    profile = dict(driver="GTiff", width=size, height=size, count=1, dtype="float32",
                   crs="EPSG:4326", transform=from_bounds(-180, -90, 180, 90, size, size),
                   nodata=-9999.0, tiled=True, blockxsize=512, blockysize=512, BIGTIFF="YES")
    rng = np.random.default_rng(seed)
    lon = np.linspace(-180, 180, size, endpoint=False) + 180 / size
    with rasterio.open(path, "w", **profile) as dst:
        for row in range(0, size, 512):
            rows = min(512, size - row)
            lat = 90 - (np.arange(row, row + rows) + 0.5) * 180 / size
            relief = (800 * np.sin(np.radians(lon)[None, :] * 3) * np.cos(np.radians(lat)[:, None] * 2)
                      + 300 * np.sin(np.radians(lon)[None, :] * 17 + np.radians(lat)[:, None] * 11))
            values = (relief + rng.normal(0, 25, (rows, size))).astype("float32")
            values[lat > 80, :] = -9999.0
            dst.write(values, 1, window=Window(0, row, size, rows))


def run(command, runs):
    """Median wall seconds and the largest peak resident set (MiB) of `runs` runs."""
    seconds, peaks = [], []
    for _ in range(runs):
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], check=True,
                              capture_output=True, text=True)
        wall, kib = done.stderr.strip().splitlines()[-1].split()
        seconds.append(float(wall))
        peaks.append(int(kib) / 1024)
    return statistics.median(seconds), max(peaks)


def ours(path, prefix):
    """geomill's answer per region id, statistics of regions over a valid cell."""
    import pyogrio
    frame = pyogrio.read_dataframe(path)
    return {str(r["id"]): {s: r[prefix + s] for s in STATS} for r in frame.to_dict("records")}


def valid_ids(regions):
    """The ids of the valid regions."""
    import pyogrio
    frame = pyogrio.read_dataframe(regions)
    keep = ~frame.geometry.is_empty & frame.geometry.notna() & frame.geometry.is_valid
    return {str(i) for i in frame["id"][keep]}


def agree(mine, theirs, label, valid):
    """Fails unless every valid region's statistics agree."""
    checked = 0
    for key, expected in theirs.items():
        if key not in valid:
            continue
        got = mine[key]
        for stat in STATS:
            a, b = got[stat], expected[stat]
            missing = lambda v: v is None or (isinstance(v, float) and math.isnan(v))
            if missing(a) or missing(b):
                if not (missing(a) and missing(b)) and not (stat == "count" and (a or 0) == (b or 0)):
                    raise SystemExit(f"{label}: region {key} {stat}: {a} against {b}")
                continue
            if abs(a - b) > 1e-6 * max(abs(b), 1.0):
                raise SystemExit(f"{label}: region {key} {stat}: {a} against {b}")
        checked += 1
    return checked


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--work", help="keep the files here (default: a temporary folder)")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or scratch
        os.makedirs(work, exist_ok=True)
        regions, raster = os.path.join(work, "regions.gpkg"), os.path.join(work, "relief.tif")
        if not os.path.exists(regions):
            subprocess.run([sys.executable, os.path.join(HERE, "real_layers.py"), work,
                            "--points", "0"], check=True, stdout=subprocess.DEVNULL)
        if not os.path.exists(raster):
            make_raster(raster, args.size)
        rows = []
        for mode, reference, script in [("centre", "rasterstats 0.21", RASTERSTATS),
                                        ("coverage", "exactextract 0.3", EXACTEXTRACT)]:
            params = {"raster": "relief", "stats": " ".join(STATS), "prefix": "z_"}
            if mode == "coverage":
                params["coverage_weighted"] = True
            pipeline = os.path.join(work, f"{mode}.json")
            with open(pipeline, "w") as f:
                json.dump({"name": mode, "steps": [{"id": "z", "capability": "zonal_stats",
                                                    "input": "regions", "params": params}]}, f)
            result = os.path.join(work, f"{mode}.gpkg")
            answer = os.path.join(work, f"{mode}.json.answer")
            geomill = run(["sh", "-c", f'rm -f "{result}" && exec "$0" "$@"', binary, "run",
                           pipeline, "--input", f"regions={regions}", "--input",
                           f"relief={raster}", "--engine", "native", "--output", result],
                          args.runs)
            peer = run([sys.executable, "-c", script, regions, raster, answer], args.runs)
            checked = agree(ours(result, "z_"), json.load(open(answer)), mode, valid_ids(regions))
            rows.append((mode, reference, geomill, peer, checked))
        size_gb = os.path.getsize(raster) / 1e9
        print(f"\nzonal statistics of 3,209 regions over a {args.size:,} x {args.size:,} float32 raster "
              f"({size_gb:.2f} GB), medians of {args.runs} run(s):\n")
        print("| cells | geomill | peak memory | reference | time | peak memory | geomill faster |")
        print("|---|---:|---:|---|---:|---:|---:|")
        for mode, reference, (g_s, g_m), (p_s, p_m), checked in rows:
            label = "centre inside" if mode == "centre" else "coverage-weighted"
            print(f"| {label} ({checked} regions checked) | {g_s:.1f} s | {g_m:.0f} MiB | {reference} "
                  f"| {p_s:.1f} s | {p_m:.0f} MiB | {p_s / g_s:.1f}x |")


if __name__ == "__main__":
    main()
