"""Real-shaped inputs for the benchmarks and tests, generated from fixed seeds.

`python benches/real_layers.py OUT_DIR [--points N] [--parts K] [--cell DEGREES] [--segment DEGREES]`
writes:

- `regions.gpkg`, layer `regions`: the Natural Earth countries cut by a grid of CELL-degree cells
  (about 3,000 pieces at the default 3.5; `--max-lat` keeps them within a latitude), every edge densified to
  SEGMENT degrees (default 0.02: 868,602 vertices at 10-degree cells; the tests take 0.1, about a fifth)
  and its vertices moved by seeded noise, as digitised coastlines and borders are. The layer mixes
  polygons and multipolygons (islands), has holes (lakes), a few invalid polygons (bow ties,
  holes touching or crossing their shell, as real files have), a few NULL and empty
  geometries, and NULLs in its attributes. Its geometry type is "Geometry" (unknown).
- `tiles.gpkg`, layer `tiles`: the same pieces as cut (no noise): neighbours share borders
  vertex for vertex, as an administrative layer does; NULL and empty geometries, NULL values.
- `points.parquet`: N points (default 1,000,000) as GeoParquet, in 400 clusters over the land,
  with an integer `id`, a double `value` (some NULL) and a text `kind`. With `--parts K` (K > 1),
  the N points are K GeoParquet parts of one layer instead, `points-00.parquet`, ..., each drawn
  from its own seed (so a part never holds the whole layer in memory while it is made).

Same seed, same files: the numbers benchmarks quote stay comparable between runs.
"""

import argparse
import os

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Polygon

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTRIES = os.path.join(
    HERE, "..", "..", "shared", "data", "naturalearth_lowres", "naturalearth_lowres.shp"
)


def countries_path():
    for candidate in (
        os.environ.get("GEOMILL_NATURALEARTH", ""),
        COUNTRIES,
        os.path.join(HERE, "..", "shared", "data", "naturalearth_lowres", "naturalearth_lowres.shp"),
    ):
        if candidate and os.path.exists(candidate):
            return candidate
    raise SystemExit("naturalearth_lowres.shp not found (set GEOMILL_NATURALEARTH)")


def jitter_ring(coords, rng, amplitude):
    """Moves each vertex of a closed ring by smooth noise plus a little white noise."""
    n = len(coords) - 1
    if n < 4:
        return coords
    t = np.arange(n) / n
    smooth = np.zeros((n, 2))
    for k in (3, 7, 17, 41):
        phase = rng.uniform(0, 2 * np.pi, 2)
        smooth[:, 0] += np.sin(2 * np.pi * k * t + phase[0]) / k
        smooth[:, 1] += np.cos(2 * np.pi * k * t + phase[1]) / k
    moved = coords[:-1] + amplitude * (smooth + rng.normal(0, 0.15, (n, 2)))
    # Noise never pushes a vertex off the globe (real files stay within ±180, ±90).
    moved[:, 0] = np.clip(moved[:, 0], -180, 180)
    moved[:, 1] = np.clip(moved[:, 1], -90, 90)
    return np.vstack([moved, moved[:1]])


def rough(polygon, rng, amplitude):
    shell = jitter_ring(np.asarray(polygon.exterior.coords), rng, amplitude)
    holes = [jitter_ring(np.asarray(r.coords), rng, amplitude) for r in polygon.interiors]
    return Polygon(shell, holes)


def lake(polygon, rng):
    """A small ring inside the polygon (a hole), or None when none fits."""
    minx, miny, maxx, maxy = polygon.bounds
    for _ in range(10):
        x, y = rng.uniform(minx, maxx), rng.uniform(miny, maxy)
        r = min(maxx - minx, maxy - miny) * rng.uniform(0.03, 0.12)
        circle = shapely.Point(x, y).buffer(r, 16)
        if polygon.contains(circle):
            return np.asarray(circle.exterior.coords)
    return None


def invalid(polygon, rng, kind):
    """A deliberately invalid variant, of the kinds real files hold."""
    minx, miny, maxx, maxy = polygon.bounds
    w, h = maxx - minx, maxy - miny
    if kind == 0:  # bow tie: the shell crosses itself
        return Polygon([(minx, miny), (maxx, maxy), (maxx, miny), (minx, maxy), (minx, miny)])
    if kind == 1:  # a hole crossing its shell
        shell = np.asarray(polygon.exterior.coords)
        hole = [(minx - w * 0.1, miny + h * 0.4), (minx + w * 0.3, miny + h * 0.4),
                (minx + w * 0.3, miny + h * 0.6), (minx - w * 0.1, miny + h * 0.6),
                (minx - w * 0.1, miny + h * 0.4)]
        return Polygon(shell, [hole])
    # a spike: a vertex far out and back along the same line (a zero-width ring part)
    coords = list(polygon.exterior.coords)
    x, y = coords[0]
    coords = [coords[0], (x + w * 0.5, y), coords[0]] + coords[1:]
    return Polygon(coords)


def pieces_of_countries(cell, max_lat):
    """The Natural Earth countries cut by a grid of CELL-degree cells."""
    world = gpd.read_file(countries_path())[["name", "continent", "pop_est", "geometry"]]
    cells = []
    for x in np.arange(-180, 180, cell):
        for y in np.arange(-max_lat, max_lat, cell):
            cells.append(shapely.box(x, y, min(x + cell, 180), min(y + cell, max_lat)))
    grid = gpd.GeoDataFrame(geometry=cells, crs=world.crs)
    pieces = gpd.overlay(world, grid, how="intersection", keep_geom_type=True)
    return pieces[~pieces.geometry.is_empty].reset_index(drop=True)


def tiles(pieces, seed=20261125):
    """The pieces as cut, neighbours sharing their borders vertex for vertex (what contiguity
    weights need), with NULL and empty geometries and NULL values at fixed positions."""
    rng = np.random.default_rng(seed)
    geometries = [None if i % 250 == 7 else shapely.from_wkt("POLYGON EMPTY") if i % 500 == 11
                  else g for i, g in enumerate(pieces.geometry)]
    values = [None if rng.random() < 0.05 else float(np.round(rng.gamma(2.0, 50.0), 3))
              for _ in geometries]
    return gpd.GeoDataFrame(
        {"id": np.arange(1, len(geometries) + 1), "name": pieces["name"],
         "continent": pieces["continent"], "value": values},
        geometry=gpd.GeoSeries(geometries, crs="EPSG:4326"),
    )


def regions(pieces, segment, seed=20261124):
    rng = np.random.default_rng(seed)
    geometries, names, pops, values = [], [], [], []
    for i, row in pieces.iterrows():
        g = shapely.segmentize(row.geometry, segment)
        parts = list(g.geoms) if isinstance(g, MultiPolygon) else [g]
        parts = [rough(p, rng, 0.01) for p in parts]
        if rng.random() < 0.08:
            hole = lake(parts[0], rng)
            if hole is not None:
                parts[0] = Polygon(parts[0].exterior.coords,
                                   [r.coords for r in parts[0].interiors] + [hole])
        # NULL, empty and invalid geometries at fixed positions: every size of the layer has some.
        if i % 250 == 7:
            geometry = None
        elif i % 500 == 11:
            geometry = shapely.from_wkt("POLYGON EMPTY")
        elif i % 90 == 3:
            geometry = invalid(parts[0], rng, (i // 90) % 3)
        elif len(parts) == 1:
            geometry = parts[0]
        else:
            geometry = MultiPolygon(parts)
        geometries.append(geometry)
        names.append(None if rng.random() < 0.02 else f"{row['name']} {i}")
        pops.append(int(row["pop_est"] * rng.uniform(0.001, 0.05)))
        values.append(None if rng.random() < 0.05 else float(np.round(rng.gamma(2.0, 50.0), 3)))
    return gpd.GeoDataFrame(
        {"id": np.arange(1, len(geometries) + 1), "name": names, "continent": pieces["continent"],
         "pop": pops, "value": values},
        geometry=gpd.GeoSeries(geometries, crs="EPSG:4326"),
    )


def points(n, land, seed=7, part=None, first_id=1):
    """N points around 400 centres on the land; a `part` draws its points from a seed of its own
    around the same centres, its ids from `first_id`."""
    rng = np.random.default_rng(seed if part is None else [seed, part])
    keep = ~land.geometry.isna() & ~land.geometry.is_empty
    land = land[keep & land.geometry.is_valid]
    centres = land.geometry.representative_point().sample(400, random_state=seed)
    cx = np.repeat(centres.x.to_numpy(), n // 400 + 1)[:n]
    cy = np.repeat(centres.y.to_numpy(), n // 400 + 1)[:n]
    spread = rng.uniform(0.2, 2.0, 400).repeat(n // 400 + 1)[:n]
    x = np.clip(cx + rng.normal(0, 1, n) * spread, -180, 180)
    y = np.clip(cy + rng.normal(0, 1, n) * spread, -89.9, 89.9)
    value = np.round(rng.gamma(2.0, 10.0, n), 2)
    value[rng.random(n) < 0.01] = np.nan
    return gpd.GeoDataFrame(
        {"id": np.arange(first_id, first_id + n), "value": value,
         "kind": np.array(["a", "b", "c", "d"])[rng.integers(0, 4, n)]},
        geometry=gpd.points_from_xy(x, y), crs="EPSG:4326",
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--parts", type=int, default=1,
                        help="write the points as this many GeoParquet parts of one layer")
    parser.add_argument("--cell", type=float, default=3.5)
    parser.add_argument("--segment", type=float, default=0.02,
                        help="the longest edge of a region, in degrees, before the noise")
    parser.add_argument(
        "--max-lat",
        type=float,
        default=90.0,
        help="keep the regions within this latitude north and south (84: Web Mercator's domain)",
    )
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    pieces = pieces_of_countries(args.cell, args.max_lat)
    layer = regions(pieces, args.segment)
    layer.to_file(os.path.join(args.out_dir, "regions.gpkg"), layer="regions", driver="GPKG",
                  engine="pyogrio", promote_to_multi=False, geometry_type="Unknown",
                  VERSION="1.2")
    tiles(pieces).to_file(os.path.join(args.out_dir, "tiles.gpkg"), layer="tiles", driver="GPKG",
                          engine="pyogrio", promote_to_multi=False, geometry_type="Unknown",
                          VERSION="1.2")
    if args.points > 0 and args.parts > 1:
        size = -(-args.points // args.parts)
        for part in range(args.parts):
            first = part * size
            n = min(size, args.points - first)
            points(n, layer, part=part, first_id=first + 1).to_parquet(
                os.path.join(args.out_dir, f"points-{part:02d}.parquet"))
    elif args.points > 0:
        points(args.points, layer).to_parquet(os.path.join(args.out_dir, "points.parquet"))


if __name__ == "__main__":
    main()
