-- 1: s
CREATE OR REPLACE TEMP TABLE "s" AS
SELECT * FROM "cities" AS t ORDER BY md5(lower(ST_AsHEXWKB(t."geom")) || '7') LIMIT 10;

