-- 1: halos, uncovered
DROP TABLE IF EXISTS "uncovered";
CREATE TEMP TABLE "uncovered" AS
WITH "halos__1" AS MATERIALIZED (SELECT "name", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "cities" AS t),
"halos" AS MATERIALIZED (SELECT "name", ST_Buffer("geom", 2, 8) AS "geom" FROM "halos__1" AS t)
SELECT p."problem" AS "problem", p."field" AS "field", count(*) AS "count" FROM (SELECT CAST(NULL AS TEXT) AS "feature", u.geomill_ref_key AS "related", 'uncovered' AS "problem", CAST(NULL AS TEXT) AS "field", 'no input feature covers this part of the reference feature' AS "reason", u.geomill_part AS "geom" FROM (SELECT r."name" AS geomill_ref_key, r."geom" AS geomill_whole, COALESCE(ST_Difference(r."geom", (SELECT ST_Union(t."geom") FROM "halos" AS t WHERE t."geom" IS NOT NULL AND NOT ST_IsEmpty(t."geom") AND ST_IsValid(t."geom") AND ST_Intersects(t."geom", r."geom"))), r."geom") AS geomill_part FROM "countries" AS r WHERE r."geom" IS NOT NULL AND NOT ST_IsEmpty(r."geom") AND ST_IsValid(r."geom")) AS u WHERE NOT ST_IsEmpty(u.geomill_part) AND ST_Area(u.geomill_part) >= 0.5 * ST_Area(u.geomill_whole)) AS p GROUP BY p."problem", p."field";

