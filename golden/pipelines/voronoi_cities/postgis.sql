-- 1: catchments
DROP TABLE IF EXISTS "catchments";
CREATE TEMP TABLE "catchments" AS
SELECT * FROM (WITH s AS (SELECT t.*, CASE WHEN t."geom" IS NULL OR ST_IsEmpty(t."geom") THEN NULL WHEN ST_GeometryType(t."geom") = 'ST_Point' THEN t."geom" ELSE ST_Centroid(t."geom") END AS __site FROM "cities" AS t), c AS (SELECT x.__cell, ST_Intersection(x.__cell, ST_SetSRID((SELECT ST_Envelope(ST_Collect(s.__site)) FROM s), ST_SRID(x.__cell))) AS __clipped FROM (SELECT (ST_Dump(ST_VoronoiPolygons(ST_Collect(s.__site), 0, NULL))).geom AS __cell FROM s) AS x) SELECT s."name", CASE WHEN ST_IsEmpty(c.__clipped) THEN NULL ELSE c.__clipped END AS "geom" FROM s LEFT JOIN c ON s.__site IS NOT NULL AND ST_Intersects(c.__cell, s.__site)) AS cells;

