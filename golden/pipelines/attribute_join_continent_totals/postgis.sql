-- 1: sums, totals
DROP TABLE IF EXISTS "totals";
CREATE TEMP TABLE "totals" AS
WITH "sums__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t),
"sums" AS (SELECT "continent", sum("pop_est") AS "pop_est_sum", ST_Union("geom") AS "geom" FROM "sums__1" AS t GROUP BY "continent")
SELECT "continent", "pop_est_sum" AS "pop_est", "geom" FROM "sums" AS t;

-- 2: joined
DROP TABLE IF EXISTS "joined";
CREATE TEMP TABLE "joined" AS
SELECT t.*, r."pop_est" AS "pop_est_right" FROM "countries" AS t JOIN "totals" AS r ON t."continent" = r."continent";

