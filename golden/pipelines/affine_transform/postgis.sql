-- 1: turned
DROP TABLE IF EXISTS "turned";
CREATE TEMP TABLE "turned" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_ZMFlag("geom") = 3 THEN ST_Affine(ST_Force3DZ("geom", 0), 0.866, -0.5, 0.5, 0.866, 1000, -500) ELSE ST_Affine("geom", 0.866, -0.5, 0.5, 0.866, 1000, -500) END AS "geom" FROM "boroughs" AS t;

