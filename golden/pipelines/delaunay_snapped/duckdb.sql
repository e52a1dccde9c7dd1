-- 1: mesh
-- runs natively: delaunay edges=false tolerance=0.5: GEOS over every feature's vertices at once, the pieces numbered by their lower-left corner
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "mesh" AS
SELECT t.* FROM "countries" AS t, (SELECT error('geomill: delaunay edges=false tolerance=0.5 runs on the native backend: DuckDB spatial has no Delaunay triangulation')) AS native_only(e) WHERE native_only.e IS NULL;

