-- 1: declared
DROP TABLE IF EXISTS "declared";
CREATE TEMP TABLE "declared" AS
SELECT "name", ST_SetSRID("geom", 4269) AS "geom" FROM "cities" AS t;

