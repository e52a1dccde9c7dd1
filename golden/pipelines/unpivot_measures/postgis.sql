-- 1: long
DROP TABLE IF EXISTS "long";
CREATE TEMP TABLE "long" AS
SELECT "continent", "name", "iso_a3", "geom", 'pop_est' AS "measure", CAST("pop_est" AS DOUBLE PRECISION) AS "amount" FROM "countries" AS t UNION ALL SELECT "continent", "name", "iso_a3", "geom", 'gdp_md_est' AS "measure", CAST("gdp_md_est" AS DOUBLE PRECISION) AS "amount" FROM "countries" AS t;

