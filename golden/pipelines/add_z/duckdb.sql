-- 1: heights
CREATE OR REPLACE TEMP TABLE "heights" AS
SELECT "name", CASE WHEN ST_ZMFlag("geom") IN (1, 3) THEN ST_Force4D("geom", 25, 0) ELSE ST_Force3DZ("geom", 25) END AS "geom" FROM "cities" AS t;

