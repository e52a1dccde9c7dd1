-- 1: africa, merged
DROP TABLE IF EXISTS "merged";
CREATE TEMP TABLE "merged" AS
WITH "africa" AS (SELECT * FROM "countries" AS t WHERE "continent" = 'Africa'),
"merged__1" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "africa" AS t)
SELECT count(*) AS "count", ST_Union("geom") AS "geom" FROM "merged__1" AS t;

