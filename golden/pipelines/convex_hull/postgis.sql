-- 1: h
DROP TABLE IF EXISTS "h";
CREATE TEMP TABLE "h" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_ConvexHull("geom") AS "geom" FROM "boroughs" AS t;

