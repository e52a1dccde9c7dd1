-- 1: asia, halo
CREATE OR REPLACE TEMP TABLE "halo" AS
WITH "asia" AS (SELECT * FROM "countries" AS t WHERE "continent" = 'Asia'),
"halo__1" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "asia" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CAST(ST_GeomFromWKB(geomill_geodesic_buffer(ST_AsWKB("geom"), 10000, 8)) AS GEOMETRY('EPSG:4326')) AS "geom" FROM "halo__1" AS t;

