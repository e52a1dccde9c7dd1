-- 1: catchments
CREATE OR REPLACE TEMP TABLE "catchments" AS
SELECT * FROM (WITH s AS (SELECT t.*, CASE WHEN t."geom" IS NULL OR ST_IsEmpty(t."geom") THEN NULL WHEN ST_GeometryType(t."geom") = 'POINT' THEN t."geom" ELSE ST_Centroid(t."geom") END AS __site FROM "cities" AS t), c AS (SELECT x.__cell, ST_Intersection(x.__cell, (SELECT ST_Envelope(ST_Collect(list(s.__site) FILTER (WHERE s.__site IS NOT NULL))) FROM s)) AS __clipped FROM (SELECT UNNEST(ST_Dump(ST_VoronoiDiagram(ST_Collect(list(s.__site) FILTER (WHERE s.__site IS NOT NULL))))).geom AS __cell FROM s) AS x) SELECT s."name", CASE WHEN ST_IsEmpty(c.__clipped) THEN NULL ELSE c.__clipped END AS "geom" FROM s LEFT JOIN c ON s.__site IS NOT NULL AND ST_Intersects(c.__cell, s.__site)) AS cells;

