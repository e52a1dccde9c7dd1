-- 1: m
DROP TABLE IF EXISTS "m";
CREATE TEMP TABLE "m" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom" FROM "countries" UNION ALL SELECT CAST(NULL AS DOUBLE PRECISION) AS "pop_est", CAST(NULL AS TEXT) AS "continent", "name", CAST(NULL AS TEXT) AS "iso_a3", CAST(NULL AS BIGINT) AS "gdp_md_est", "geom" FROM "cities";

