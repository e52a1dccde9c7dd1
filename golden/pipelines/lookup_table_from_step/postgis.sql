-- 1: totals
DROP TABLE IF EXISTS "totals";
CREATE TEMP TABLE "totals" AS
WITH "totals__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT "continent", sum("pop_est") AS "pop_est_sum", ST_Union("geom") AS "geom" FROM "totals__1" AS t GROUP BY "continent";

-- 2: with_total
DROP TABLE IF EXISTS "with_total";
CREATE TEMP TABLE "with_total" AS
SELECT t.*, r."pop_est_sum" AS "continent_pop" FROM "countries" AS t LEFT JOIN "totals" AS r ON t."continent" = r."continent";

