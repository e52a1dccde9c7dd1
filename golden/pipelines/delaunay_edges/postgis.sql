-- 1: mesh
-- runs natively: delaunay edges=true tolerance=0: GEOS over every feature's vertices at once, the pieces numbered by their lower-left corner
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "mesh";
CREATE TEMP TABLE "mesh" AS
SELECT t.* FROM "cities" AS t, (SELECT 'geomill: delaunay edges=true tolerance=0 runs on the native backend: PostGIS 3.3''s GEOS 3.11 leaves out slivers along the convex hull (GEOS issue 953)'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

