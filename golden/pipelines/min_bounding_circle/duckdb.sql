-- 1: circles
-- runs natively: per-feature geometry, rows in parallel: geom = smallest enclosing circle of the convex hull's vertices (Welzl), drawn with 16 vertices a quarter
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "circles" AS
SELECT t.* FROM "countries" AS t, (SELECT error('geomill: MinBoundingCircle(16 seg/quarter) runs on the native backend: DuckDB spatial has no function giving the same shape')) AS native_only(e) WHERE native_only.e IS NULL;

