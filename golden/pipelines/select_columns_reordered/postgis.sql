-- 1: picked
DROP TABLE IF EXISTS "picked";
CREATE TEMP TABLE "picked" AS
SELECT "iso_a3", "name", "pop_est", "geom" FROM "countries" AS t;

