-- 1: counted
-- runs natively: point-in-polygon aggregation (Within): an R-tree over the polygon parts, points read straight from WKB in parallel batches, 2 aggregate(s) accumulated per polygon
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "counted" AS
WITH n AS (SELECT *, row_number() OVER () AS "__geomill_row" FROM "countries"), a AS (SELECT t."__geomill_row", count(*) AS "count", count(r."name") AS "name_count" FROM n AS t JOIN "cities" AS r ON ST_Within(r."geom", t."geom") GROUP BY t."__geomill_row") SELECT n.* EXCLUDE ("__geomill_row"), COALESCE(a."count", 0) AS "count", COALESCE(a."name_count", 0) AS "name_count" FROM n LEFT JOIN a ON n."__geomill_row" = a."__geomill_row" ORDER BY n."__geomill_row";

