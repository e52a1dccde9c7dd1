-- 1: snapped
DROP TABLE IF EXISTS "snapped";
CREATE TEMP TABLE "snapped" AS
WITH "snapped__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsEmpty("geom") THEN "geom" WHEN ST_GeometryType("geom") IN ('ST_MultiPoint', 'ST_MultiLineString', 'ST_MultiPolygon') THEN ST_Multi(ST_ReducePrecision("geom", 0.5)) ELSE ST_ReducePrecision("geom", 0.5) END AS "geom" FROM "snapped__1" AS t;

