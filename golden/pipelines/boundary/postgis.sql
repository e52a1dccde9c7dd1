-- 1: rings
DROP TABLE IF EXISTS "rings";
CREATE TEMP TABLE "rings" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_GeometryType("geom") = 'ST_GeometryCollection' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "boroughs" AS t;

