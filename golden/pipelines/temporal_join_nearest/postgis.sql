-- 1: events
DROP TABLE IF EXISTS "events";
CREATE TEMP TABLE "events" AS
SELECT "name", "geom", CAST('2000-01-01' AS DATE) + CAST(length("name") * 300 AS INTEGER) AS "founded" FROM "cities" AS t;

-- 2: dated, near_in_time
DROP TABLE IF EXISTS "near_in_time";
CREATE TEMP TABLE "near_in_time" AS
WITH "dated" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", CAST('2000-01-01' AS DATE) + CAST("gdp_md_est" % 7000 AS INTEGER) AS "founded" FROM "countries" AS t)
SELECT t.*, n.* FROM "dated" AS t JOIN LATERAL (SELECT r."name" AS "name_right", r."founded" AS "founded_right" FROM "events" AS r WHERE CAST(r."founded" AS TIMESTAMP) BETWEEN CAST(t."founded" AS TIMESTAMP) - INTERVAL '2592000 seconds' AND CAST(t."founded" AS TIMESTAMP) + INTERVAL '2592000 seconds' ORDER BY abs(EXTRACT(EPOCH FROM CAST(r."founded" AS TIMESTAMP)) - EXTRACT(EPOCH FROM CAST(t."founded" AS TIMESTAMP))), EXTRACT(EPOCH FROM CAST(r."founded" AS TIMESTAMP)), md5(encode(ST_AsBinary(r."geom"), 'hex')) LIMIT 1) AS n ON true;

