-- 1: dated, in_range
CREATE OR REPLACE TEMP TABLE "in_range" AS
WITH "dated" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", CAST('2000-01-01' AS DATE) + CAST("gdp_md_est" % 7000 AS INTEGER) AS "founded" FROM "countries" AS t)
SELECT * FROM "dated" AS t WHERE CAST("founded" AS TIMESTAMP) >= CAST('2005-01-01 00:00:00' AS TIMESTAMP) AND CAST("founded" AS TIMESTAMP) < CAST('2010-12-31 00:00:00' AS TIMESTAMP) + INTERVAL '1 day';

