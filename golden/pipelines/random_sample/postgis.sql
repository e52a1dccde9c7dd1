-- 1: s
DROP TABLE IF EXISTS "s";
CREATE TEMP TABLE "s" AS
SELECT * FROM "cities" AS t ORDER BY md5(encode(ST_AsBinary(t."geom"), 'hex') || '7') LIMIT 10;

