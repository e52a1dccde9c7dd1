-- 1: big
CREATE OR REPLACE TEMP TABLE "big" AS
SELECT * FROM "countries" AS t WHERE "pop_est" > 50000000;

-- 2: halo
CREATE OR REPLACE TEMP TABLE "halo" AS
WITH "halo__1" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "big" AS t)
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CAST(ST_GeomFromWKB(geomill_geodesic_buffer(ST_AsWKB("geom"), 500, 8)) AS GEOMETRY('EPSG:4326')) AS "geom" FROM "halo__1" AS t;

-- 3: cities_in
CREATE OR REPLACE TEMP TABLE "cities_in" AS
SELECT t.*, r."iso_a3" AS "iso_a3" FROM "cities" AS t JOIN "halo" AS r ON ST_Intersects(t."geom", r."geom");

-- 4: counted
-- runs natively: point-in-polygon aggregation (Within): an R-tree over the polygon parts, points read straight from WKB in parallel batches, 1 aggregate(s) accumulated per polygon
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "counted" AS
WITH n AS (SELECT *, row_number() OVER () AS "__geomill_row" FROM "big"), a AS (SELECT t."__geomill_row", count(*) AS "count" FROM n AS t JOIN "cities_in" AS r ON ST_Within(r."geom", t."geom") GROUP BY t."__geomill_row") SELECT n.* EXCLUDE ("__geomill_row"), COALESCE(a."count", 0) AS "count" FROM n LEFT JOIN a ON n."__geomill_row" = a."__geomill_row" ORDER BY n."__geomill_row";

-- 5: save
COPY (SELECT * FROM "counted") TO '__OUTPUT_DIR__/counted_2026-01-01.gpkg' (FORMAT GDAL, DRIVER 'GPKG');

