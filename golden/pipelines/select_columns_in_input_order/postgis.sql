-- 1: countries__columns
DROP TABLE IF EXISTS "countries__columns";
CREATE TEMP TABLE "countries__columns" AS
SELECT "continent", "name", "geom" FROM "countries";

