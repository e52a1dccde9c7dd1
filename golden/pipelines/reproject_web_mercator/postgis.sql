-- 1: r
DROP TABLE IF EXISTS "r";
CREATE TEMP TABLE "r" AS
SELECT "name", ST_Transform(ST_SetSRID("geom", 4326), 3857) AS "geom" FROM "cities" AS t;

