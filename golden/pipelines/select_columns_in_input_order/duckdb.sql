-- 1: countries__columns
CREATE OR REPLACE TEMP TABLE "countries__columns" AS
SELECT "continent", "name", "geom" FROM "countries";

