-- 1: rings, merged, middle
CREATE OR REPLACE TEMP TABLE "middle" AS
WITH "rings" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'GEOMETRYCOLLECTION' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "countries" AS t),
"merged" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_Dimension("geom") = 1 AND NOT ST_IsEmpty("geom") THEN ST_LineMerge("geom") ELSE "geom" END AS "geom" FROM "rings" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'LINESTRING' THEN CASE WHEN ST_IsEmpty("geom") THEN "geom" WHEN ST_Length("geom") = 0 THEN ST_StartPoint("geom") ELSE ST_LineSubstring("geom", 0.25, 0.75) END END AS "geom" FROM "merged" AS t;

