-- 1: top5
DROP TABLE IF EXISTS "top5";
CREATE TEMP TABLE "top5" AS
SELECT * FROM "countries" AS t ORDER BY "gdp_md_est" DESC NULLS LAST LIMIT 5;

-- 2: sorted
DROP TABLE IF EXISTS "sorted";
CREATE TEMP TABLE "sorted" AS
SELECT * FROM "countries" AS t ORDER BY "continent" ASC NULLS LAST, "pop_est" DESC NULLS LAST;

