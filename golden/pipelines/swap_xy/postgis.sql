-- 1: latlon
DROP TABLE IF EXISTS "latlon";
CREATE TEMP TABLE "latlon" AS
SELECT "name", ST_FlipCoordinates("geom") AS "geom" FROM "cities" AS t;

