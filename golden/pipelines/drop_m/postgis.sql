-- 1: raised, measured, unmeasured
DROP TABLE IF EXISTS "unmeasured";
CREATE TEMP TABLE "unmeasured" AS
WITH "raised" AS MATERIALIZED (SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (1, 3) THEN ST_Force4D("geom", 5, 0) ELSE ST_Force3DZ("geom", 5) END AS "geom" FROM "cities" AS t),
"measured" AS MATERIALIZED (SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (2, 3) THEN ST_Force4D("geom", 0, 1) ELSE ST_Force3DM("geom", 1) END AS "geom" FROM "raised" AS t)
SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (2, 3) THEN ST_Force3DZ("geom", 0) ELSE ST_Force2D("geom") END AS "geom" FROM "measured" AS t;

