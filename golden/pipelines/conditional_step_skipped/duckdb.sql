-- 1: africa, hulls
CREATE OR REPLACE TEMP TABLE "hulls" AS
WITH "africa" AS (SELECT * FROM "countries" AS t WHERE "continent" = 'Africa')
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_ConvexHull("geom") AS "geom" FROM "africa" AS t;

