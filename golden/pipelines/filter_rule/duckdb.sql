-- 1: big
CREATE OR REPLACE TEMP TABLE "big" AS
SELECT * FROM "countries" AS t WHERE "pop_est" > 100000000 AND "continent" <> 'Antarctica';

