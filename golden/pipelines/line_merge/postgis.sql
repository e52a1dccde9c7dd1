-- 1: rings, merged
DROP TABLE IF EXISTS "merged";
CREATE TEMP TABLE "merged" AS
WITH "rings" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'ST_GeometryCollection' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "countries" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_Dimension("geom") = 1 AND NOT ST_IsEmpty("geom") THEN ST_LineMerge("geom") ELSE "geom" END AS "geom" FROM "rings" AS t;

