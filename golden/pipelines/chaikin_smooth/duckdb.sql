-- 1: smooth
-- runs natively: per-feature geometry, rows in parallel: geom = Chaikin corner cutting, 2 iteration(s)
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "smooth" AS
SELECT t.* FROM "boroughs" AS t, (SELECT error('geomill: ChaikinSmooth(2×) runs on the native backend: DuckDB spatial has no function giving the same shape')) AS native_only(e) WHERE native_only.e IS NULL;

