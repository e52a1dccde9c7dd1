-- 1: measured
DROP TABLE IF EXISTS "measured";
CREATE TEMP TABLE "measured" AS
SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (2, 3) THEN ST_Force4D("geom", 0, 3) ELSE ST_Force3DM("geom", 3) END AS "geom" FROM "cities" AS t;

