-- 1: ring
DROP TABLE IF EXISTS "ring";
CREATE TEMP TABLE "ring" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Buffer("geom", 999.998, 4) AS "geom" FROM "boroughs" AS t;

