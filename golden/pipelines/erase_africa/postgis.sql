-- 1: africa
DROP TABLE IF EXISTS "africa";
CREATE TEMP TABLE "africa" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Africa';

-- 2: rest
DROP TABLE IF EXISTS "rest";
CREATE TEMP TABLE "rest" AS
WITH "rest__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t)
SELECT * FROM (SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", COALESCE(ST_Difference(t."geom", (SELECT ST_Union(r."geom") FROM "africa" AS r WHERE ST_Intersects(t."geom", r."geom"))), t."geom") AS "geom" FROM "rest__1" AS t) AS e WHERE NOT ST_IsEmpty(e."geom");

