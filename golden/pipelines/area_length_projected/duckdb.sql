-- 1: a
CREATE OR REPLACE TEMP TABLE "a" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", "geom", ST_Area("geom") * 9.290341161327482e-8 AS "area_km2", (CASE WHEN ST_Dimension("geom") = 2 THEN ST_Perimeter("geom") ELSE ST_Length("geom") END) * 0.0003048006096012192 AS "perimeter_km" FROM "boroughs" AS t;

