-- 1: south
CREATE OR REPLACE TEMP TABLE "south" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'South America';

-- 2: pts
CREATE OR REPLACE TEMP TABLE "pts" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Centroid("geom") AS "geom" FROM "south" AS t;

-- 3: pts
COPY (SELECT * REPLACE (CASE WHEN ST_IsEmpty("geom") THEN NULL ELSE "geom" END AS "geom") FROM "pts") TO '__OUTPUT_DIR__/south_centroids.fgb' (FORMAT GDAL, DRIVER 'FlatGeobuf', LAYER_CREATION_OPTIONS 'SPATIAL_INDEX=NO');

-- 4: south
COPY (SELECT * FROM "south") TO '__OUTPUT_DIR__/south.csv' (FORMAT GDAL, DRIVER 'CSV', LAYER_CREATION_OPTIONS 'GEOMETRY=AS_WKT');

