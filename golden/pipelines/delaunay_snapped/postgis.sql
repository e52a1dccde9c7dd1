-- 1: mesh
-- runs natively: delaunay edges=false tolerance=0.5: GEOS over every feature's vertices at once, the pieces numbered by their lower-left corner
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "mesh";
CREATE TEMP TABLE "mesh" AS
SELECT CAST(row_number() OVER (ORDER BY ST_XMin(d.g), ST_YMin(d.g), ST_AsBinary(ST_Normalize(d.g))) AS BIGINT) AS "id", d.g AS "geom" FROM (SELECT (ST_Dump(ST_DelaunayTriangles(ST_Collect(t."geom"), 0.5, 0))).geom AS g FROM "countries" AS t) AS d;

