-- 1: africa, merged
DROP TABLE IF EXISTS "merged";
CREATE TEMP TABLE "merged" AS
WITH "africa" AS (SELECT * FROM "countries" AS t WHERE "continent" = 'Africa')
SELECT count(*) AS "count", ST_Union("geom") AS "geom" FROM "africa" AS t;

