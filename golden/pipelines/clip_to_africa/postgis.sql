-- 1: africa
DROP TABLE IF EXISTS "africa";
CREATE TEMP TABLE "africa" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Africa';

-- 2: clipped
DROP TABLE IF EXISTS "clipped";
CREATE TEMP TABLE "clipped" AS
WITH "clipped__1" AS MATERIALIZED (SELECT "name", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "cities" AS t)
SELECT t."name", ST_Intersection(t."geom", m."geom") AS "geom" FROM "clipped__1" AS t, (SELECT ST_Union(r."geom") AS "geom" FROM "africa" AS r) AS m WHERE ST_Intersects(t."geom", m."geom");

