-- 1: asia, halo
CREATE OR REPLACE TEMP TABLE "halo" AS
WITH "asia" AS (SELECT * FROM "countries" AS t WHERE "continent" = 'Asia'),
"halo__1" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "asia" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CAST(ST_Transform(ST_Buffer(ST_Transform("geom", 'EPSG:4326', '+proj=aeqd +lat_0=' || ST_Y(ST_Centroid("geom")) || ' +lon_0=' || ST_X(ST_Centroid("geom")) || ' +datum=WGS84 +units=m +no_defs', always_xy := true), 10000, 8), '+proj=aeqd +lat_0=' || ST_Y(ST_Centroid("geom")) || ' +lon_0=' || ST_X(ST_Centroid("geom")) || ' +datum=WGS84 +units=m +no_defs', '+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X(ST_Centroid("geom")) || ' +no_defs', always_xy := true) AS GEOMETRY('EPSG:4326')) AS "geom" FROM "halo__1" AS t;

