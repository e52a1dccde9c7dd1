-- 1: a
CREATE OR REPLACE TEMP TABLE "a" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", ST_Area_Spheroid(ST_FlipCoordinates("geom")) * 1e-6 AS "area_km2" FROM "countries" AS t;

