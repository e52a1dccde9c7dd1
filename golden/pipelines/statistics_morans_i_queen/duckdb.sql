-- 1: moran
-- runs natively: Moran's I of gdp_md_est (queen contiguity, row), 99 permutations seed 7: neighbours found through a grid index (contiguity: shared vertices hashed), statistics over every feature, permutations in parallel
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "moran" AS
SELECT t.* FROM "countries" AS t, (SELECT error('geomill: Moran''s I of gdp_md_est (queen contiguity, row), 99 permutations seed 7 runs on the native backend: it needs every feature''s neighbours')) AS native_only(e) WHERE native_only.e IS NULL;

