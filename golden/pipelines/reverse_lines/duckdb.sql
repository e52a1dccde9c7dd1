-- 1: rings, reversed
CREATE OR REPLACE TEMP TABLE "reversed" AS
WITH "rings" AS (SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_GeometryType("geom") = 'GEOMETRYCOLLECTION' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "boroughs" AS t)
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_IsEmpty("geom") THEN "geom" ELSE ST_Reverse("geom") END AS "geom" FROM "rings" AS t;

