-- 1: picked
CREATE OR REPLACE TEMP TABLE "picked" AS
SELECT "iso_a3", "name", "pop_est", "geom" FROM "countries" AS t;

