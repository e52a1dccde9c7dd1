-- 1: ring
CREATE OR REPLACE TEMP TABLE "ring" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Buffer("geom", 999.998, 4) AS "geom" FROM "boroughs" AS t;

