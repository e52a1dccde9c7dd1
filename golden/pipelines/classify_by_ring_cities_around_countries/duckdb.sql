-- 1: rings
CREATE OR REPLACE TEMP TABLE "rings" AS
WITH "rings__1" AS (SELECT t.*, n.* FROM "cities" AS t LEFT JOIN LATERAL (SELECT ST_Distance(t."geom", r."geom") AS "distance" FROM "countries" AS r WHERE NOT ST_IsEmpty(t."geom") AND NOT ST_IsEmpty(r."geom") ORDER BY "distance" LIMIT 1) AS n ON true)
SELECT "name", "geom", "distance", CASE WHEN "distance" <= 0 THEN 1 WHEN "distance" <= 1 THEN 2 WHEN "distance" <= 5 THEN 3 END AS "ring" FROM "rings__1" AS t;

