-- 1: europe
CREATE OR REPLACE TEMP TABLE "europe" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Europe';

-- 2: save
COPY (SELECT * FROM "europe") TO '__OUTPUT_DIR__/europe_2026-01-01.gpkg' (FORMAT GDAL, DRIVER 'GPKG');

