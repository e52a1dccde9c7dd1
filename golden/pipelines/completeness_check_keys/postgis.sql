-- 1: delivered, lacking
DROP TABLE IF EXISTS "lacking";
CREATE TEMP TABLE "lacking" AS
WITH "delivered" AS (SELECT * FROM "countries" AS t WHERE "continent" <> 'Oceania')
SELECT CAST(NULL AS TEXT) AS "feature", r."iso_a3" AS "related", 'missing' AS "problem", CAST(NULL AS TEXT) AS "field", 'no input feature has this reference feature''s key' AS "reason", r."geom" AS "geom" FROM "countries" AS r WHERE NOT EXISTS (SELECT 1 FROM "delivered" AS t WHERE t."iso_a3" = r."iso_a3")
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'unexpected' AS "problem", CAST(NULL AS TEXT) AS "field", 'no reference feature has this feature''s key' AS "reason", t."geom" AS "geom" FROM "delivered" AS t WHERE NOT EXISTS (SELECT 1 FROM "countries" AS r WHERE t."iso_a3" = r."iso_a3");

