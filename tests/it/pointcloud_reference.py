"""Point-cloud references for `pointcloud_grid_summary` and `pointcloud_zonal_height`: NumPy,
pandas and Shapely computed from laspy's arrays (`numpy`), and GISPulse 2.2.3's own
capabilities run on the same file (`gispulse`: its `pointcloud_load_las`, then the step).

argv: `grid` or `zonal`, the reference (`numpy` or `gispulse`), the result file, then a JSON
object of the step: `las` (the point file), `classes` (kept first; empty: all), and `cell_size`
and `stats` (grid) or `polygons`, `stats`, `prefix`, `ground_col` and `key` (the fields naming
a polygon; default `name`) (zonal).
Prints JSON: the rows of each side and the first differences (numbers within 1e-9 relative,
counts equal, a missing statistic NULL or NaN on both sides, cells within 1e-6 of a unit).
"""
import contextlib, json, math, sys, warnings

warnings.filterwarnings("ignore")

import geopandas as gpd
import laspy
import numpy as np
import pandas as pd
import shapely

QUANTILES = {"median": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}


def points(path, classes):
    las = laspy.read(path)
    chosen = np.ones(len(las.points), bool)
    if classes:
        chosen = np.isin(np.asarray(las.classification), classes)
    return (np.asarray(las.x)[chosen], np.asarray(las.y)[chosen], np.asarray(las.z)[chosen])


def statistic(values, name):
    if name == "count":
        return len(values)
    if len(values) == 0:
        return math.nan
    if name in QUANTILES:
        return float(np.percentile(values, QUANTILES[name] * 100))
    return float({"min": np.min, "max": np.max, "mean": np.mean, "std": np.std}[name](values))


def grid_numpy(step):
    x, y, z = points(step["las"], step["classes"])
    size = step["cell_size"]
    x0, y0 = x.min(), y.min()
    col = np.floor_divide(x - x0, size).astype(np.int64)
    row = np.floor_divide(y - y0, size).astype(np.int64)
    order = np.lexsort((col, row))
    row, col, z = row[order], col[order], z[order]
    starts = np.flatnonzero(np.r_[True, (np.diff(row) != 0) | (np.diff(col) != 0)])
    ends = np.r_[starts[1:], len(z)]
    records = []
    for s, e in zip(starts, ends):
        record = {"row": int(row[s]), "col": int(col[s])}
        for name in step["stats"]:
            record[f"z_{name}"] = statistic(z[s:e], name)
        left, bottom = x0 + col[s] * size, y0 + row[s] * size
        record["geom"] = shapely.box(left, bottom, left + size, bottom + size)
        records.append(record)
    return gpd.GeoDataFrame(records, geometry="geom")


def zonal_numpy(step):
    x, y, z = points(step["las"], step["classes"])
    polygons = gpd.read_file(step["polygons"])
    prefix = step.get("prefix", "z_")
    stats = step["stats"]
    answer = polygons.copy()
    columns = {f"{prefix}{name}": [] for name in stats}
    heights = []
    for i, shape in enumerate(polygons.geometry):
        inside = shapely.contains_xy(shape, x, y) if shape is not None else np.zeros(len(x), bool)
        values = z[inside]
        for name in stats:
            columns[f"{prefix}{name}"].append(statistic(values, name))
        ground = step.get("ground_col")
        low = answer[ground].iloc[i] if ground else (values.min() if len(values) else math.nan)
        heights.append(values.max() - low if len(values) else math.nan)
    for name, values in columns.items():
        answer[name] = values
    answer[f"{prefix}height"] = heights
    return answer.rename_geometry("geom")


def cloud(step):
    """GISPulse's `pointcloud_load_las` of the file, the classes kept."""
    with contextlib.redirect_stdout(sys.stderr):
        from gispulse.capabilities.pointcloud import PointcloudLoadLasCapability

        return PointcloudLoadLasCapability().execute(
            gpd.GeoDataFrame(), path=step["las"], classifications=step["classes"] or None
        )


def grid_gispulse(step):
    from gispulse.capabilities.pointcloud import PointcloudGridSummaryCapability

    points = cloud(step)
    with contextlib.redirect_stdout(sys.stderr):
        answer = PointcloudGridSummaryCapability().execute(
            points, cell_size=step["cell_size"], stats=step["stats"])
    return answer.rename_geometry("geom")


def zonal_gispulse(step):
    from gispulse.capabilities.pointcloud import PointcloudZonalHeightCapability

    polygons = gpd.read_file(step["polygons"])
    points = cloud(step).set_crs(polygons.crs, allow_override=True)
    with contextlib.redirect_stdout(sys.stderr):
        answer = PointcloudZonalHeightCapability().execute(
            polygons, ref_gdf=points, stats=step["stats"], prefix=step.get("prefix", "z_"),
            ground_col=step.get("ground_col"))
    return answer.rename_geometry("geom")


def same(a, b):
    missing = lambda v: v is None or (isinstance(v, float) and math.isnan(v))
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)), abs(float(b)))
    return a == b


def compare(expected, got, key):
    differences = []
    if key:
        expected = expected.sort_values(key).reset_index(drop=True)
        got = got.sort_values(key).reset_index(drop=True)
    if len(expected) != len(got):
        differences.append(f"{len(got)} rows, expected {len(expected)}")
        return differences
    for column in expected.columns:
        if column == "geom":
            continue
        if column not in got.columns:
            differences.append(f"no column {column}")
            continue
        for i, (a, b) in enumerate(zip(expected[column], got[column])):
            if not same(a, b):
                differences.append(f"row {i} {column}: {b!r}, expected {a!r}")
                break
    for i, (a, b) in enumerate(zip(expected.geometry, got.geometry)):
        if not np.allclose(a.bounds, b.bounds, rtol=0, atol=1e-6):
            differences.append(f"row {i} geometry: {b.bounds}, expected {a.bounds}")
            break
    return differences[:5]


def main():
    kind, reference, result, step = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    expected = {("grid", "numpy"): grid_numpy, ("grid", "gispulse"): grid_gispulse,
                ("zonal", "numpy"): zonal_numpy, ("zonal", "gispulse"): zonal_gispulse}[
        (kind, reference)](step)
    got = gpd.read_parquet(result) if result.endswith(".parquet") else gpd.read_file(result)
    got = got.rename_geometry("geom") if got.geometry.name != "geom" else got
    key = ["row", "col"] if kind == "grid" else step.get("key", ["name"])
    print(json.dumps({"expected": len(expected), "got": len(got),
                      "differences": compare(expected, got, key)}))


main()
