-- 1: hotspots
-- runs natively: Getis-Ord Gi* of Shape_Area (within 65616.66666666667, original), 999 permutations seed 0: neighbours found through a grid index (contiguity: shared vertices hashed), statistics over every feature, permutations in parallel
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "hotspots" AS
SELECT t.* FROM "boroughs" AS t, (SELECT error('geomill: Getis-Ord Gi* of Shape_Area (within 65616.66666666667, original), 999 permutations seed 0 runs on the native backend: it needs every feature''s neighbours')) AS native_only(e) WHERE native_only.e IS NULL;

