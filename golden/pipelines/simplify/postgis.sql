-- 1: s
DROP TABLE IF EXISTS "s";
CREATE TEMP TABLE "s" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_SimplifyPreserveTopology("geom", 0.1) AS "geom" FROM "countries" AS t;

