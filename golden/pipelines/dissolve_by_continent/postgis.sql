-- 1: continents
DROP TABLE IF EXISTS "continents";
CREATE TEMP TABLE "continents" AS
WITH "continents__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT "continent", max("gdp_md_est") AS "gdp_md_est_max", sum("pop_est") AS "pop_est_sum", ST_Union("geom") AS "geom" FROM "continents__1" AS t GROUP BY "continent";

