-- 1: c
DROP TABLE IF EXISTS "c";
CREATE TEMP TABLE "c" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Centroid("geom") AS "geom" FROM "countries" AS t;

