-- 1: raised, flat
DROP TABLE IF EXISTS "flat";
CREATE TEMP TABLE "flat" AS
WITH "raised" AS MATERIALIZED (SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (1, 3) THEN ST_Force4D("geom", 10, 0) ELSE ST_Force3DZ("geom", 10) END AS "geom" FROM "cities" AS t)
SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (1, 3) THEN ST_Force3DM("geom", 0) ELSE ST_Force2D("geom") END AS "geom" FROM "raised" AS t;

