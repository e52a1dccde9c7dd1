-- 1: ring
DROP TABLE IF EXISTS "ring";
CREATE TEMP TABLE "ring" AS
WITH "ring__1" AS MATERIALIZED (SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "boroughs" AS t)
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Buffer("geom", 999.998, 4) AS "geom" FROM "ring__1" AS t;

