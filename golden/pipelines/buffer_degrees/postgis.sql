-- 1: wide
DROP TABLE IF EXISTS "wide";
CREATE TEMP TABLE "wide" AS
WITH "wide__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Buffer("geom", 0.5, 8) AS "geom" FROM "wide__1" AS t;

