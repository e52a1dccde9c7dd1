-- 1: hulls
DROP TABLE IF EXISTS "hulls";
CREATE TEMP TABLE "hulls" AS
SELECT t.* FROM "countries" AS t, (SELECT 'geomill: ConcaveHull(ratio=0.2, holes=true) runs on the native backend: PostGIS has no function giving the same shape'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

