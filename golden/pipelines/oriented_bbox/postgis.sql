-- 1: boxes
DROP TABLE IF EXISTS "boxes";
CREATE TEMP TABLE "boxes" AS
SELECT t.* FROM "boroughs" AS t, (SELECT 'geomill: OrientedEnvelope runs on the native backend: PostGIS has no function giving the same shape'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

