-- 1: halo
CREATE OR REPLACE TEMP TABLE "halo" AS
WITH "halo__1" AS (SELECT "name", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "cities" AS t)
SELECT "name", CAST(ST_GeomFromWKB(geomill_geodesic_buffer(ST_AsWKB("geom"), 500, 8)) AS GEOMETRY('EPSG:4326')) AS "geom" FROM "halo__1" AS t;

