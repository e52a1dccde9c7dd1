-- 1: centres, rings
DROP TABLE IF EXISTS "rings";
CREATE TEMP TABLE "rings" AS
WITH "centres" AS MATERIALIZED (SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Centroid("geom") AS "geom" FROM "boroughs" AS t),
"rings__1" AS (SELECT t.*, n.* FROM "centres" AS t LEFT JOIN LATERAL (SELECT c."metres" FROM (SELECT ST_Distance(t."geom", r."geom") AS "metres" FROM "boroughs" AS r WHERE NOT ST_IsEmpty(t."geom") ORDER BY r."geom" <-> t."geom" LIMIT 4) AS c WHERE c."metres" IS NOT NULL ORDER BY c."metres" LIMIT 1) AS n ON true)
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", "geom", "metres" * 0.3048006096012192 AS "metres", CASE WHEN "metres" * 0.3048006096012192 <= 500 THEN 1 WHEN "metres" * 0.3048006096012192 <= 2000 THEN 2 WHEN "metres" * 0.3048006096012192 <= 10000 THEN 3 END AS "band" FROM "rings__1" AS t;

