
import os, sys
import geopandas as gpd, numpy as np, shapely
from shapely.geometry import LineString, MultiLineString, MultiPoint, Point, Polygon
out = sys.argv[1]
rng = np.random.default_rng(20260601)
boroughs = gpd.read_file(sys.argv[2])
n = 1500
xs = rng.uniform(905000, 1100000, n)
ys = rng.uniform(115000, 280000, n)
points = [Point(x, y) for x, y in zip(xs, ys)]
# Around the hand-made lines east of Queens, and close to the zero-length line.
points += [Point(x, y) for x, y in zip(rng.uniform(1080000, 1100000, 300), rng.uniform(145000, 180000, 300))]
points += [Point(1098000 + dx, 155000 + dy) for dx, dy in rng.normal(0, 300, (20, 2))]
ids = list(range(1, len(points) + 1))
odd = {9001: None, 9002: shapely.from_wkt("POINT EMPTY"),
       9003: MultiPoint([(1000000, 200000), (1001000, 201000)]),
       9004: LineString([(990000, 190000), (995000, 195000)]),
       9005: shapely.box(1010000, 210000, 1012000, 212000)}
ids += list(odd)
points += list(odd.values())
gpd.GeoDataFrame({"pid": ids, "name": [f"p{i}" for i in ids]},
                 geometry=gpd.GeoSeries(points, crs="EPSG:2263")).to_file(
    os.path.join(out, "nyc_points.gpkg"), layer="points", driver="GPKG", engine="pyogrio",
    promote_to_multi=False, geometry_type="Unknown")
lines, names = [], []
for _, row in boroughs.iterrows():
    for k, part in enumerate(row.geometry.geoms):
        lines.append(part.exterior)
        names.append(f"{row['BoroName']} {k}")
special = {
    9001: MultiLineString([[(1085000, 150000), (1090000, 152000)], [(1090000, 152000), (1095000, 150000)]]),
    9002: MultiLineString([[(1085000, 160000), (1090000, 161000)], [(1092000, 161000), (1096000, 160000)]]),
    9003: MultiLineString([[(1085000, 168000), (1090000, 168000)], [(1095000, 168000), (1090000, 168000)]]),
    9004: LineString([(1098000, 155000), (1098000, 155000)]),
    9005: shapely.from_wkt("LINESTRING EMPTY"),
    9006: None,
    9007: shapely.box(1086000, 154000, 1088000, 156000),
    9008: MultiLineString([[(1080000, 175000), (1099000, 176000)]]),
}
line_ids = list(range(1, len(lines) + 1)) + list(special)
names += [f"special {k}" for k in special]
lines += list(special.values())
gpd.GeoDataFrame({"line_id": line_ids, "name": names},
                 geometry=gpd.GeoSeries([None if g is None else LineString(g.coords) if g.geom_type == "LinearRing" else g for g in lines], crs="EPSG:2263")).to_file(
    os.path.join(out, "nyc_lines.gpkg"), layer="lines", driver="GPKG", engine="pyogrio",
    promote_to_multi=False, geometry_type="Unknown")
print("written")
