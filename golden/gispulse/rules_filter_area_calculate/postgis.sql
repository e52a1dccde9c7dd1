-- 1: Large_countries, Measure, Density__0, Density
DROP TABLE IF EXISTS "Density";
CREATE TEMP TABLE "Density" AS
WITH "Large_countries" AS (SELECT * FROM "input" AS t WHERE ((coalesce("pop_est" > 50000000, false)) AND (coalesce("continent" <> 'Antarctica', true)))),
"Measure" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", ST_Area(ST_Transform(ST_SetSRID("geom", 4326), 3857)) AS "area_m2" FROM "Large_countries" AS t),
"Density__0" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", "area_m2", (CAST("pop_est" AS FLOAT8) / NULLIF((CAST("area_m2" AS FLOAT8) / NULLIF(1000000, 0)), 0)) AS "density" FROM "Measure" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", "area_m2", "density", (coalesce("density" > 100, false)) AS "dense" FROM "Density__0" AS t;

