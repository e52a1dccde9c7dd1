-- 1: europe
DROP TABLE IF EXISTS "europe";
CREATE TEMP TABLE "europe" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Europe';

-- 2: save
-- geomill writes "europe" to '__OUTPUT_DIR__/europe_2026-01-01.gpkg' as gpkg
SELECT 1;

