-- job prepare
-- 1: europe
CREATE OR REPLACE TEMP TABLE "europe" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Europe';

-- job report
-- 1: counts
-- runs natively: point-in-polygon aggregation (Intersects): an R-tree over the polygon parts, points read straight from WKB in parallel batches, 1 aggregate(s) accumulated per polygon
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "counts" AS
WITH n AS (SELECT *, row_number() OVER () AS "__geomill_row" FROM "countries"), a AS (SELECT t."__geomill_row", count(*) AS "count" FROM n AS t JOIN "cities" AS r ON ST_Intersects(r."geom", t."geom") GROUP BY t."__geomill_row") SELECT n.* EXCLUDE ("__geomill_row"), COALESCE(a."count", 0) AS "count" FROM n LEFT JOIN a ON n."__geomill_row" = a."__geomill_row" ORDER BY n."__geomill_row";

