-- 1: pairs
-- runs natively: neighbours table (3 nearest by great circle, row): neighbours found through a grid index (contiguity: shared vertices hashed), one row per pair
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "pairs";
CREATE TEMP TABLE "pairs" AS
SELECT t.* FROM "cities" AS t, (SELECT 'geomill: the neighbours table (3 nearest by great circle, row) runs on the native backend: it is made from the whole layer'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

