-- 1: hulls
CREATE OR REPLACE TEMP TABLE "hulls" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_ConcaveHull(ST_Force2D("geom"), 0.2, true) AS "geom" FROM "countries" AS t;

