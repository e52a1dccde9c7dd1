
import json, subprocess, sys, warnings
import geopandas as gpd, numpy as np, shapely
from pyproj import Geod
warnings.filterwarnings("ignore")
problems = []
dsn = sys.argv[2]
cases = json.load(open(sys.argv[1]))
for case in cases:
    label, p = case["label"], case["params"]
    ours = gpd.read_file(case["path"])
    source = gpd.read_file(case["source"])
    source = source[source.geometry.notna() & ~source.geometry.is_empty]
    if "where" in case:
        source = source.query(case["where"])
    if case.get("area"):
        geod = Geod(ellps="WGS84")
        areas = np.array([abs(geod.geometry_area_perimeter(g)[0]) for g in ours.geometry])
        worst = np.max(np.abs(areas / case["area"] - 1))
        if worst > 0.01:
            problems.append(f"{label}: a cell's area is off by {worst:.4f}")
        if not shapely.union_all(ours.geometry.values).covers(shapely.union_all(source.geometry.values)):
            problems.append(f"{label}: the cells do not cover the layer")
        continue
    x0, y0, x1, y1 = p.get("bbox") or source.total_bounds.tolist()
    fn = "ST_SquareGrid" if case["capability"] == "grid_create" else "ST_HexagonGrid"
    sql = (f"SELECT i, j, ST_AsText(geom) FROM {fn}({p['size']!r}, "
           f"ST_MakeEnvelope({x0!r}, {y0!r}, {x1!r}, {y1!r}))")
    out = subprocess.run(["psql", dsn, "-qtA", "-F", "|", "-c", sql], capture_output=True,
                         text=True, check=True).stdout
    theirs = {}
    for line in out.splitlines():
        i, j, wkt = line.split("|")
        theirs[(int(i), int(j))] = shapely.from_wkt(wkt)
    if p.get("touching"):
        tree = shapely.STRtree(source.geometry.values)
        theirs = {k: g for k, g in theirs.items() if len(tree.query(g, predicate="intersects"))}
    mine = {(int(i), int(j)): g for i, j, g in zip(ours["i"], ours["j"], ours.geometry)}
    if set(mine) != set(theirs):
        problems.append(f"{label}: cells differ: {len(set(mine) - set(theirs))} more, "
                        f"{len(set(theirs) - set(mine))} fewer than PostGIS's {len(theirs)}")
        continue
    worst = max(shapely.symmetric_difference(mine[k], theirs[k]).area / theirs[k].area
                for k in theirs)
    if worst > 1e-9:
        problems.append(f"{label}: a cell differs from PostGIS's by {worst:.2e} of its area")
    if list(ours["cell_id"]) != list(range(len(ours))):
        problems.append(f"{label}: cell ids are not 0..n")
print("\n".join(problems) or f"compared {len(cases)} cases")
