-- 1: near
DROP TABLE IF EXISTS "near";
CREATE TEMP TABLE "near" AS
SELECT a."name" AS "feature", b."name" AS "related", 'near_duplicate' AS "problem", CAST(NULL AS TEXT) AS "field", 'within 0.5 of the related feature (discrete Hausdorff distance)' AS "reason", a."geom" AS "geom" FROM "cities" AS a JOIN "cities" AS b ON a."name" < b."name" AND ST_DWithin(a."geom", b."geom", 0.5) AND ST_HausdorffDistance(a."geom", b."geom") <= 0.5 WHERE a."geom" IS NOT NULL AND NOT ST_IsEmpty(a."geom") AND b."geom" IS NOT NULL AND NOT ST_IsEmpty(b."geom");

