-- 1: rings
DROP TABLE IF EXISTS "rings";
CREATE TEMP TABLE "rings" AS
WITH "rings__1" AS (SELECT t.*, n.* FROM "cities" AS t LEFT JOIN LATERAL (SELECT c."distance" FROM (SELECT ST_Distance(t."geom", r."geom") AS "distance" FROM "countries" AS r WHERE NOT ST_IsEmpty(t."geom") ORDER BY r."geom" <-> t."geom" LIMIT 4) AS c WHERE c."distance" IS NOT NULL ORDER BY c."distance" LIMIT 1) AS n ON true)
SELECT "name", "geom", "distance", CASE WHEN "distance" <= 0 THEN 1 WHEN "distance" <= 1 THEN 2 WHEN "distance" <= 5 THEN 3 END AS "ring" FROM "rings__1" AS t;

