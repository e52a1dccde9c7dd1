-- 1: regions
DROP TABLE IF EXISTS "regions";
CREATE TEMP TABLE "regions" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", CASE "continent" WHEN 'Africa' THEN 'EMEA' WHEN 'Asia' THEN 'APAC' WHEN 'Europe' THEN 'EMEA' WHEN 'Oceania' THEN 'APAC' ELSE 'Americas' END AS "region" FROM "countries" AS t;

