-- 1: a
DROP TABLE IF EXISTS "a";
CREATE TEMP TABLE "a" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", ST_Area(CAST(ST_SetSRID("geom", 4326) AS geography)) * 1e-6 AS "area_km2" FROM "countries" AS t;

