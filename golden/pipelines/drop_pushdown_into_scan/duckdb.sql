-- 1: rich
CREATE OR REPLACE TEMP TABLE "rich" AS
WITH "countries__columns" AS (SELECT "continent", "name", "gdp_md_est", "geom" FROM "countries")
SELECT * FROM "countries__columns" AS t WHERE "gdp_md_est" > 1000000;

