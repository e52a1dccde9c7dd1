-- 1: stamped, recent
DROP TABLE IF EXISTS "recent";
CREATE TEMP TABLE "recent" AS
WITH "stamped" AS (SELECT "name", "geom", CAST('2020-01-01 00:00:00' AS TIMESTAMP) AS "seen" FROM "cities" AS t)
SELECT * FROM "stamped" AS t WHERE CAST("seen" AS TIMESTAMP) >= (now() AT TIME ZONE 'UTC') - INTERVAL '2 weeks' AND CAST("seen" AS TIMESTAMP) <= (now() AT TIME ZONE 'UTC');

