-- 1: latlon
CREATE OR REPLACE TEMP TABLE "latlon" AS
SELECT "name", ST_FlipCoordinates("geom") AS "geom" FROM "cities" AS t;

