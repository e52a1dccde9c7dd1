-- 1: big
DROP TABLE IF EXISTS "big";
CREATE TEMP TABLE "big" AS
SELECT * FROM "countries" AS t WHERE "pop_est" > 50000000;

-- 2: halo
DROP TABLE IF EXISTS "halo";
CREATE TEMP TABLE "halo" AS
WITH "halo__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "big" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_SetSRID(CASE WHEN GeometryType("geom") = 'POINT' THEN ST_Transform(ST_Buffer(ST_Transform("geom", '+proj=longlat +datum=WGS84 +no_defs', '+proj=aeqd +lat_0=' || ST_Y("geom") || ' +lon_0=' || ST_X("geom") || ' +datum=WGS84 +units=m +no_defs'), 500, 8), '+proj=aeqd +lat_0=' || ST_Y("geom") || ' +lon_0=' || ST_X("geom") || ' +datum=WGS84 +units=m +no_defs', '+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X("geom") || ' +no_defs') ELSE ST_Transform(ST_Affine(ST_Buffer(ST_Affine(ST_Transform("geom", '+proj=longlat +R=1 +no_defs', '+proj=aeqd +R=1 +lat_0=' || ST_Y(ST_Centroid("geom")) || ' +lon_0=' || ST_X(ST_Centroid("geom")) || ' +no_defs'), (6378137.0 / sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2))), 0, 0, (6378137.0 * (1 - 0.006694379990141317) / pow(sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2)), 3)), 0, 0), 500, 8), 1 / (6378137.0 / sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2))), 0, 0, 1 / (6378137.0 * (1 - 0.006694379990141317) / pow(sqrt(1 - 0.006694379990141317 * pow(sin(radians(ST_Y(ST_Centroid("geom")))), 2)), 3)), 0, 0), '+proj=aeqd +R=1 +lat_0=' || ST_Y(ST_Centroid("geom")) || ' +lon_0=' || ST_X(ST_Centroid("geom")) || ' +no_defs', '+proj=longlat +R=1 +lon_wrap=' || ST_X(ST_Centroid("geom")) || ' +no_defs') END, 4326) AS "geom" FROM "halo__1" AS t;

-- 3: cities_in
DROP TABLE IF EXISTS "cities_in";
CREATE TEMP TABLE "cities_in" AS
SELECT t.*, r."iso_a3" AS "iso_a3" FROM "cities" AS t JOIN "halo" AS r ON ST_Intersects(t."geom", r."geom");

-- 4: counted
-- runs natively: point-in-polygon aggregation (Within): an R-tree over the polygon parts, points read straight from WKB in parallel batches, 1 aggregate(s) accumulated per polygon
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "counted";
CREATE TEMP TABLE "counted" AS
SELECT t.*, a.* FROM "big" AS t LEFT JOIN LATERAL (SELECT count(*) AS "count" FROM "cities_in" AS r WHERE ST_Within(r."geom", t."geom")) AS a ON true;

-- 5: save
-- geomill writes "counted" to '__OUTPUT_DIR__/counted_2026-01-01.gpkg' as gpkg
SELECT 1;

