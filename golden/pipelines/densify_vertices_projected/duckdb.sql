-- 1: dense
-- runs natively: per-feature geometry, rows in parallel: geom = each segment cut into equal pieces of at most 499.999
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "dense" AS
SELECT t.* FROM "boroughs" AS t, (SELECT error('geomill: Densify(499.999 crs units) runs on the native backend: DuckDB spatial has no function giving the same shape')) AS native_only(e) WHERE native_only.e IS NULL;

