-- job prepare
-- 1: europe
DROP TABLE IF EXISTS "europe";
CREATE TEMP TABLE "europe" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Europe';

-- job report
-- 1: counts
-- runs natively: point-in-polygon aggregation (Intersects): an R-tree over the polygon parts, points read straight from WKB in parallel batches, 1 aggregate(s) accumulated per polygon
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "counts";
CREATE TEMP TABLE "counts" AS
SELECT t.*, a.* FROM "countries" AS t LEFT JOIN LATERAL (SELECT count(*) AS "count" FROM "cities" AS r WHERE ST_Intersects(r."geom", t."geom")) AS a ON true;

