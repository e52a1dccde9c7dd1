-- 1: flag, renamed, typed
DROP TABLE IF EXISTS "typed";
CREATE TEMP TABLE "typed" AS
WITH "countries__columns" AS (SELECT "pop_est", "continent", "name", "geom" FROM "countries"),
"flag" AS (SELECT "pop_est", "continent", "name", "geom", CAST('naturalearth' AS TEXT) AS "source" FROM "countries__columns" AS t),
"renamed" AS (SELECT "pop_est" AS "population", "continent", "name", "geom", "source" FROM "flag" AS t)
SELECT CAST("population" AS BIGINT) AS "population", "continent", "name", "geom", "source" FROM "renamed" AS t;

