-- 1: ring
DROP TABLE IF EXISTS "ring";
CREATE TEMP TABLE "ring" AS
WITH "ring__1" AS MATERIALIZED (SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "boroughs" AS t)
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Buffer("geom", 1000, 8) AS "geom" FROM "ring__1" AS t;

-- 2: all
DROP TABLE IF EXISTS "all";
CREATE TEMP TABLE "all" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", "geom", upper("BoroName") AS "label" FROM "ring" AS t;

-- 3: box
DROP TABLE IF EXISTS "box";
CREATE TEMP TABLE "box" AS
SELECT * FROM "ring" AS t WHERE ST_Intersects("geom", ST_MakeEnvelope(990000, 190000, 1000000, 200000, ST_SRID("geom")));

-- 4: save
-- geomill writes "box" to '__OUTPUT_DIR__/near.gpkg' as gpkg
SELECT 1;

