-- 1: big
DROP TABLE IF EXISTS "big";
CREATE TEMP TABLE "big" AS
SELECT * FROM "countries" AS t WHERE "pop_est" > 100000000 AND "continent" <> 'Antarctica';

