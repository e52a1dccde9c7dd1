"""The raster steps' references: GISPulse 2.2.3's own raster capabilities (rasterio 1.4 and
numpy underneath) run on the same uploaded files, and the rasters derived for the tests.

`derive ELEV OUT_DIR`: writes, from terra's elev.tif, three overlapping tiles on its grid (each
edited so overlaps differ: b is +5 m, c is -3 m with a 4 x 4 hole of nodata) and a second date
for change detection: elev with six seeded rectangles raised by 25-80 m and every cell jittered
by -3..3 m (numpy default_rng(20261129)), nodata kept. Prints their paths as JSON.

`check CASES.json`: runs GISPulse's capability of each case and compares it with the raster and
result row geomill wrote; prints one verdict per case as JSON.
"""
import json
import sys
import tempfile
import warnings

import numpy as np

warnings.simplefilter("ignore")


def derive(elev, out):
    import rasterio
    from rasterio.windows import Window

    paths = {}
    with rasterio.open(elev) as src:
        profile = src.profile.copy()
        data = src.read(1)
        nodata = src.nodata
        tiles = {
            "tile_a": (Window(0, 0, 60, 50), 0, None),
            "tile_b": (Window(40, 30, 55, 60), 5, None),
            "tile_c": (Window(20, 20, 60, 50), -3, (10, 10)),
        }
        for name, (window, shift, hole) in tiles.items():
            part = data[window.row_off:window.row_off + window.height,
                        window.col_off:window.col_off + window.width].copy()
            valid = part != nodata
            part[valid] = part[valid] + shift
            if hole:
                part[hole[0]:hole[0] + 4, hole[1]:hole[1] + 4] = nodata
            tile_profile = dict(profile, width=window.width, height=window.height,
                                transform=src.window_transform(window))
            path = f"{out}/{name}.tif"
            with rasterio.open(path, "w", **tile_profile) as dst:
                dst.write(part, 1)
            paths[name] = path
        rng = np.random.default_rng(20261129)
        after = data.astype(np.int32)
        valid = data != nodata
        for _ in range(6):
            h, w = rng.integers(3, 13, size=2)
            r, c = rng.integers(0, data.shape[0] - h), rng.integers(0, data.shape[1] - w)
            after[r:r + h, c:c + w] += int(rng.integers(25, 81))
        after += rng.integers(-3, 4, size=data.shape)
        after = np.where(valid, after, nodata).astype(data.dtype)
        path = f"{out}/elev_after.tif"
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(after, 1)
        paths["elev_after"] = path
    sys.__stdout__.write(json.dumps(paths) + "\n")


def same_pixels(ours, theirs):
    """Whether two rasters hold the same grid, CRS, type, nodata and cells (NaN equal to NaN)."""
    import rasterio

    with rasterio.open(ours) as a, rasterio.open(theirs) as b:
        A, B = a.read(), b.read()
        problems = []
        if A.shape != B.shape:
            return [f"shape {A.shape} against {B.shape}"]
        if A.dtype != B.dtype:
            problems.append(f"type {A.dtype} against {B.dtype}")
        if not np.allclose(list(a.transform)[:6], list(b.transform)[:6], rtol=1e-12, atol=0):
            problems.append(f"transform {list(a.transform)[:6]} against {list(b.transform)[:6]}")
        if a.crs != b.crs:
            problems.append(f"crs {a.crs} against {b.crs}")
        na, nb = a.nodata, b.nodata
        if not (na == nb or (na is not None and nb is not None and np.isnan(na) and np.isnan(nb))):
            problems.append(f"nodata {na} against {nb}")
        equal = (A == B) | (np.isnan(A) & np.isnan(B)) if A.dtype.kind == "f" else A == B
        if not equal.all():
            where = np.argwhere(~equal)
            i = tuple(where[0])
            problems.append(f"{len(where)} cells differ, first at {i}: {A[i]} against {B[i]}")
        return problems


def same_box(row_geometry, their_geometry):
    a, b = np.array(row_geometry.bounds), np.array(their_geometry.bounds)
    return [] if np.allclose(a, b, rtol=1e-12, atol=1e-9) else [f"bounds {a} against {b}"]


def check(cases_path):
    import geopandas as gpd
    import pyogrio
    import gispulse.capabilities.raster as capabilities

    # GISPulse's tier check asks for a licence: the capabilities themselves are what is compared.
    capabilities.check_tier = lambda *_: True
    cases = json.load(open(cases_path))
    verdicts = []
    scratch = tempfile.mkdtemp()
    for n, case in enumerate(cases):
        kind = case["kind"]
        theirs = f"{scratch}/{n}.tif"
        ours = pyogrio.read_dataframe(case["result"])
        empty = gpd.GeoDataFrame(geometry=[], crs="EPSG:4326")
        problems = []
        if kind == "ndvi":
            frame = capabilities.NdviCapability().execute(
                empty, raster_path=case["raster"], output_path=theirs)
            problems += same_pixels(case["ours"], theirs)
            for key in ("ndvi_min", "ndvi_max"):
                if ours[key][0] != frame[key][0]:
                    problems.append(f"{key} {ours[key][0]} against {frame[key][0]}")
            if abs(ours["ndvi_mean"][0] - frame["ndvi_mean"][0]) > 1e-6 * abs(frame["ndvi_mean"][0]):
                problems.append(f"ndvi_mean {ours['ndvi_mean'][0]} against {frame['ndvi_mean'][0]}")
        elif kind == "clip":
            mask = pyogrio.read_dataframe(case["mask"])
            frame = capabilities.RasterClipCapability().execute(
                mask, raster_path=case["raster"], output_path=theirs,
                all_touched=case["all_touched"], crop=case["crop"], nodata=case.get("nodata"))
            problems += same_pixels(case["ours"], theirs)
        elif kind == "reproject":
            frame = capabilities.RasterReprojectCapability().execute(
                empty, raster_path=case["raster"], output_path=theirs,
                target_crs=case["target_crs"], resampling=case["resampling"])
            if case["resampling"] == "lanczos":
                # GDAL 3.10 (rasterio's) and Debian's GDAL 3.6 (geomill's) have different Lanczos
                # kernels: the cells are compared with GDAL 3.6's own gdalwarp given rasterio's
                # options, the grid and row with GISPulse's.
                import subprocess
                warped = f"{scratch}/{n}-gdalwarp.tif"
                subprocess.run(["gdalwarp", "-q", "-t_srs", case["target_crs"], "-r", "lanczos",
                                "-et", "0.125", "-wo", "NUM_THREADS=1", "-wo", "UNIFIED_SRC_NODATA=YES",
                                case["raster"], warped], check=True)
                problems += same_pixels(case["ours"], warped)
            else:
                problems += same_pixels(case["ours"], theirs)
        elif kind == "merge":
            frame = capabilities.RasterMergeCapability().execute(
                empty, raster_paths=case["rasters"], output_path=theirs, method=case["method"])
            problems += same_pixels(case["ours"], theirs)
            if int(ours["n_sources"][0]) != int(frame["n_sources"][0]):
                problems.append("n_sources")
        elif kind == "zonal":
            zones = pyogrio.read_dataframe(case["zones"])
            frame = capabilities.ZonalStatsCapability().execute(
                zones, raster_path=case["raster"], stats=case["stats"])
            mine = ours.set_index("ID_2").sort_index()
            yours = frame.set_index("ID_2").sort_index()
            if list(mine.index) != list(yours.index):
                problems.append(f"regions {list(mine.index)} against {list(yours.index)}")
            for stat in case["stats"]:
                for key, a, b in zip(yours.index, mine["rs_" + stat], yours["rs_" + stat]):
                    if not (a == b or abs(a - b) <= 1e-9 * max(abs(b), 1.0)):
                        problems.append(f"region {key} rs_{stat} {a} against {b}")
            verdicts.append({"case": case["label"], "problems": problems})
            continue
        elif kind == "coverage":
            import rasterio
            import shapely
            from exactextract import exact_extract
            from exactextract.raster import NumPyRasterSource
            with rasterio.open(case["raster"]) as src:
                left, bottom, right, top = src.bounds
                cells = src.read(1)
                nodata = None if src.nodata is None else int(src.nodata)
                source = NumPyRasterSource(cells, left, bottom, right, top, nodata=nodata)
            zones = pyogrio.read_dataframe(case["zones"])
            features = [{"type": "Feature", "properties": {"ID_2": int(i)},
                         "geometry": shapely.geometry.mapping(g)} for i, g in zip(zones["ID_2"], zones.geometry)]
            names = {"count": "count", "sum": "sum", "mean": "mean", "std": "stdev", "median": "median",
                     "majority": "majority", "percentile_90": "quantile_90"}
            answers = exact_extract(source, features, ["count", "sum", "mean", "stdev", "median", "majority",
                                                      "quantile(q=0.9)"], include_cols=["ID_2"], output="geojson")
            mine = {int(k): row for k, row in zip(ours["ID_2"], ours.to_dict("records"))}
            for answer in answers:
                key = int(answer["properties"]["ID_2"])
                for ours_name, theirs_name in names.items():
                    a, b = mine[key]["cw_" + ours_name], answer["properties"][theirs_name]
                    if not (a == b or abs(a - b) <= 1e-9 * max(abs(b), 1.0)):
                        problems.append(f"region {key} {ours_name} {a} against exactextract {b}")
            verdicts.append({"case": case["label"], "problems": problems})
            continue
        elif kind == "change":
            frame = capabilities.ChangeDetectionCapability().execute(
                empty, raster_before=case["before"], raster_after=case["after"],
                threshold=case["threshold"])
            mine = sorted((g.normalize().wkt, float(v)) for g, v in zip(ours.geometry, ours["diff_mean"]))
            yours = sorted((g.normalize().wkt, float(v)) for g, v in zip(frame.geometry, frame["diff_mean"]))
            if len(mine) != len(yours):
                problems.append(f"{len(mine)} regions against {len(yours)}")
            else:
                for (g1, v1), (g2, v2) in zip(mine, yours):
                    if g1 != g2 or v1 != v2:
                        problems.append(f"region {g1[:80]} {v1} against {g2[:80]} {v2}")
                        break
            verdicts.append({"case": case["label"], "problems": problems, "regions": len(yours)})
            continue
        problems += same_box(ours.geometry[0], frame.geometry[0])
        verdicts.append({"case": case["label"], "problems": problems})
    sys.__stdout__.write(json.dumps(verdicts) + "\n")


if __name__ == "__main__":
    import contextlib

    # GISPulse logs to stdout: the answer is written to the real stdout, everything else to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        {"derive": lambda: derive(sys.argv[2], sys.argv[3]),
         "check": lambda: check(sys.argv[2])}[sys.argv[1]]()
