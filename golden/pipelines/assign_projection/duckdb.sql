-- 1: declared
CREATE OR REPLACE TEMP TABLE "declared" AS
SELECT "name", ST_SetCRS("geom", 'EPSG:4269') AS "geom" FROM "cities" AS t;

