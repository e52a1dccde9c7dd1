-- 1: density
-- runs natively: gaussian kernel density, bandwidth 500000 m, on a square grid of 125000 m over the layer's extent: points binned in a grid of the kernel's reach, each cell's density summed over the points in reach, cells in parallel
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "density" AS
SELECT t.* FROM "cities" AS t, (SELECT error('geomill: the gaussian kernel density, bandwidth 500000 m, on a square grid of 125000 m over the layer''s extent runs on the native backend: it is made from the whole layer')) AS native_only(e) WHERE native_only.e IS NULL;

-- 2: hot
CREATE OR REPLACE TEMP TABLE "hot" AS
SELECT * FROM "density" AS t WHERE "density" > 1e-12;

