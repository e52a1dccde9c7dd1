-- 1: sized, label
CREATE OR REPLACE TEMP TABLE "label" AS
WITH "sized" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", CASE WHEN "pop_est" > 100000000 THEN 'large' WHEN "pop_est" > 10000000 THEN 'medium' ELSE 'small' END AS "size" FROM "countries" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", "size", COALESCE("iso_a3", "name") AS "label" FROM "sized" AS t;

