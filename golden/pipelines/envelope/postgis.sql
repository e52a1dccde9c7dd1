-- 1: boxes
DROP TABLE IF EXISTS "boxes";
CREATE TEMP TABLE "boxes" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsEmpty("geom") THEN "geom" ELSE ST_ConvexHull(ST_Envelope("geom")) END AS "geom" FROM "countries" AS t;

