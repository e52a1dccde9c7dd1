-- 1: d
DROP TABLE IF EXISTS "d";
CREATE TEMP TABLE "d" AS
SELECT DISTINCT ON ("continent") * FROM "countries" AS t ORDER BY "continent", md5(encode(ST_AsBinary(t."geom"), 'hex'));

