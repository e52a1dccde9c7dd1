-- 1: r
CREATE OR REPLACE TEMP TABLE "r" AS
SELECT "name", ST_Transform("geom", 'EPSG:4326', 'EPSG:3857', always_xy := true) AS "geom" FROM "cities" AS t;

