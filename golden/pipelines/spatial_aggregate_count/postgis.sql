-- 1: counted
-- runs natively: point-in-polygon aggregation (Within): an R-tree over the polygon parts, points read straight from WKB in parallel batches, 2 aggregate(s) accumulated per polygon
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "counted";
CREATE TEMP TABLE "counted" AS
SELECT t.*, a.* FROM "countries" AS t LEFT JOIN LATERAL (SELECT count(*) AS "count", count(r."name") AS "name_count" FROM "cities" AS r WHERE ST_Within(r."geom", t."geom")) AS a ON true;

