-- 1: continents
DROP TABLE IF EXISTS "continents";
CREATE TEMP TABLE "continents" AS
SELECT "continent", max("gdp_md_est") AS "gdp_md_est_max", sum("pop_est") AS "pop_est_sum", ST_Union("geom") AS "geom" FROM "countries" AS t GROUP BY "continent";

