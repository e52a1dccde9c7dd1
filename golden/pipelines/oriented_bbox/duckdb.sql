-- 1: boxes
CREATE OR REPLACE TEMP TABLE "boxes" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_IsEmpty("geom") THEN "geom" ELSE ST_MinimumRotatedRectangle("geom") END AS "geom" FROM "boroughs" AS t;

