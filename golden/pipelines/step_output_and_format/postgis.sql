-- 1: south
DROP TABLE IF EXISTS "south";
CREATE TEMP TABLE "south" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'South America';

-- 2: pts
DROP TABLE IF EXISTS "pts";
CREATE TEMP TABLE "pts" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Centroid("geom") AS "geom" FROM "south" AS t;

-- 3: pts
-- geomill writes "pts" to '__OUTPUT_DIR__/south_centroids.fgb' as fgb
SELECT 1;

-- 4: south
-- geomill writes "south" to '__OUTPUT_DIR__/south.csv' as csv
SELECT 1;

