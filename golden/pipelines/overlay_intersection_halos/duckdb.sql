-- 1: halos
CREATE OR REPLACE TEMP TABLE "halos" AS
WITH "halos__1" AS (SELECT "name", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "cities" AS t)
SELECT "name", CAST(ST_GeomFromWKB(geomill_geodesic_buffer(ST_AsWKB("geom"), 100000, 8)) AS GEOMETRY('EPSG:4326')) AS "geom" FROM "halos__1" AS t;

-- 2: pieces
CREATE OR REPLACE TEMP TABLE "pieces" AS
WITH "pieces__1" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT * FROM (SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", r."name" AS "ref_name", ST_Intersection(t."geom", r."geom") AS "geom" FROM "pieces__1" AS t JOIN "halos" AS r ON ST_Intersects(t."geom", r."geom")) AS o WHERE o."geom" IS NOT NULL AND NOT ST_IsEmpty(o."geom");

