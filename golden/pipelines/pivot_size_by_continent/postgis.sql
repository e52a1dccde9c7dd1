-- 1: sized, pivoted
DROP TABLE IF EXISTS "pivoted";
CREATE TEMP TABLE "pivoted" AS
WITH "sized" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", CASE WHEN "pop_est" > 50000000 THEN 'large' ELSE 'small' END AS "size" FROM "countries" AS t)
SELECT "continent", sum("pop_est") FILTER (WHERE "size" = 'large') AS "pop_large", sum("pop_est") FILTER (WHERE "size" = 'small') AS "pop_small", (array_agg("geom" ORDER BY md5(encode(ST_AsBinary("geom"), 'hex'))))[1] AS "geom" FROM "sized" AS t GROUP BY "continent";

