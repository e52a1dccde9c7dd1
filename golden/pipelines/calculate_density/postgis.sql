-- 1: d
DROP TABLE IF EXISTS "d";
CREATE TEMP TABLE "d" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", "gdp_md_est" * 1000000 / NULLIF("pop_est", 0) AS "gdp_per_capita", upper("name") AS "name_upper" FROM "countries" AS t;

