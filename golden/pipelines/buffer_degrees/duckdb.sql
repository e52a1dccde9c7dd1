-- 1: wide
CREATE OR REPLACE TEMP TABLE "wide" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Buffer("geom", 0.5, 8) AS "geom" FROM "countries" AS t;

