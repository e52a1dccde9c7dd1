-- 1: snapped
CREATE OR REPLACE TEMP TABLE "snapped" AS
WITH "snapped__1" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsEmpty("geom") THEN "geom" ELSE ST_ReducePrecision(CASE WHEN ST_ZMFlag("geom") IN (2, 3) THEN ST_Force3DZ("geom", 0) ELSE ST_Force2D("geom") END, 0.5) END AS "geom" FROM "snapped__1" AS t;

