-- 1: broken
CREATE OR REPLACE TEMP TABLE "broken" AS
SELECT p."problem" AS "problem", p."field" AS "field", count(*) AS "count" FROM (SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'not_null' AS "problem", 'pop_est' AS "field", 'NULL where a value is required' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."pop_est" IS NULL
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'range' AS "problem", 'pop_est' AS "field", 'below the minimum 1000' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."pop_est" < 1000
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'range' AS "problem", 'pop_est' AS "field", 'above the maximum 1000000000' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."pop_est" > 1000000000
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'regex' AS "problem", 'iso_a3' AS "field", 'does not match [A-Z]{3}' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."iso_a3" IS NOT NULL AND NOT (regexp_full_match(CAST(t."iso_a3" AS TEXT), '[A-Z]{3}'))
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'unique' AS "problem", 'iso_a3' AS "field", 'the same value as another feature' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."iso_a3" IN (SELECT u."iso_a3" FROM "countries" AS u WHERE u."iso_a3" IS NOT NULL GROUP BY u."iso_a3" HAVING count(*) > 1)
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'allowed' AS "problem", 'continent' AS "field", 'not one of the allowed values' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."continent" IS NOT NULL AND NOT (CAST(t."continent" AS TEXT) IN ('Africa', 'Asia', 'Europe', 'North America', 'South America', 'Oceania'))) AS p GROUP BY p."problem", p."field";

