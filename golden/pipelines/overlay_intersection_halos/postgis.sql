-- 1: halos
DROP TABLE IF EXISTS "halos";
CREATE TEMP TABLE "halos" AS
WITH "halos__1" AS MATERIALIZED (SELECT "name", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "cities" AS t)
SELECT "name", ST_SetSRID(CASE WHEN GeometryType("geom") = 'POINT' THEN ST_Transform(ST_Buffer(ST_Transform("geom", '+proj=longlat +datum=WGS84 +no_defs', '+proj=aeqd +lat_0=' || ST_Y("geom") || ' +lon_0=' || ST_X("geom") || ' +datum=WGS84 +units=m +no_defs'), 100000, 8), '+proj=aeqd +lat_0=' || ST_Y("geom") || ' +lon_0=' || ST_X("geom") || ' +datum=WGS84 +units=m +no_defs', '+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X("geom") || ' +no_defs') ELSE ST_Transform(ST_Affine(ST_Buffer(ST_Affine(ST_Transform("geom", '+proj=longlat +R=1 +no_defs', '+proj=aeqd +R=1 +lat_0=' || ST_Y(ST_Centroid("geom")) || ' +lon_0=' || ST_X(ST_Centroid("geom")) || ' +no_defs'), (6378137.0 / sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2))), 0, 0, (6378137.0 * (1 - 0.006694379990141317) / pow(sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2)), 3)), 0, 0), 100000, 8), 1 / (6378137.0 / sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2))), 0, 0, 1 / (6378137.0 * (1 - 0.006694379990141317) / pow(sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2)), 3)), 0, 0), '+proj=aeqd +R=1 +lat_0=' || ST_Y(ST_Centroid("geom")) || ' +lon_0=' || ST_X(ST_Centroid("geom")) || ' +no_defs', '+proj=longlat +R=1 +lon_wrap=' || ST_X(ST_Centroid("geom")) || ' +no_defs') END, 4326) AS "geom" FROM "halos__1" AS t;

-- 2: pieces
DROP TABLE IF EXISTS "pieces";
CREATE TEMP TABLE "pieces" AS
WITH "pieces__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT * FROM (SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", r."name" AS "ref_name", ST_Intersection(t."geom", r."geom") AS "geom" FROM "pieces__1" AS t JOIN "halos" AS r ON ST_Intersects(t."geom", r."geom")) AS o WHERE o."geom" IS NOT NULL AND NOT ST_IsEmpty(o."geom");

