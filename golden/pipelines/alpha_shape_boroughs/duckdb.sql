-- 1: shapes
-- runs natively: per-feature geometry, rows in parallel: geom = GEOS 3.12+'s concave hull: Delaunay triangles (GEOS) eroded from the border in GEOS's queue order
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "shapes" AS
SELECT t.* FROM "boroughs" AS t, (SELECT error('geomill: AlphaShape(alpha=2000 crs units, holes=false) runs on the native backend: DuckDB spatial has no function giving the same shape')) AS native_only(e) WHERE native_only.e IS NULL;

