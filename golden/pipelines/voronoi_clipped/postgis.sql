-- 1: catchments
-- runs natively: voronoi envelope=[-180.0, -90.0, 180.0, 90.0] clip=true: GEOS over every feature's site at once, each row given the cell its site lies in
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "catchments";
CREATE TEMP TABLE "catchments" AS
SELECT * FROM (WITH s AS (SELECT t.*, CASE WHEN t."geom" IS NULL OR ST_IsEmpty(t."geom") THEN NULL WHEN ST_GeometryType(t."geom") = 'ST_Point' THEN t."geom" ELSE ST_Centroid(t."geom") END AS __site FROM "countries" AS t), c AS (SELECT x.__cell, ST_Intersection(x.__cell, ST_SetSRID(ST_MakeEnvelope(-180, -90, 180, 90), ST_SRID(x.__cell))) AS __clipped FROM (SELECT (ST_Dump(ST_VoronoiPolygons(ST_Collect(s.__site), 0, ST_MakeEnvelope(-180, -90, 180, 90)))).geom AS __cell FROM s) AS x) SELECT s."pop_est", s."continent", s."name", s."iso_a3", s."gdp_md_est", CASE WHEN ST_IsEmpty(c.__clipped) THEN NULL ELSE c.__clipped END AS "geom" FROM s LEFT JOIN c ON s.__site IS NOT NULL AND ST_Intersects(c.__cell, s.__site)) AS cells;

