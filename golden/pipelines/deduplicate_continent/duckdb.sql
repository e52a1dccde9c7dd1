-- 1: d
CREATE OR REPLACE TEMP TABLE "d" AS
SELECT DISTINCT ON ("continent") * FROM "countries" AS t ORDER BY "continent", md5(lower(ST_AsHEXWKB(t."geom")));

