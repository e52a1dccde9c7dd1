-- 1: valid
DROP TABLE IF EXISTS "valid";
CREATE TEMP TABLE "valid" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "countries" AS t;

