-- 1: top5
CREATE OR REPLACE TEMP TABLE "top5" AS
SELECT * FROM "countries" AS t ORDER BY "gdp_md_est" DESC NULLS LAST LIMIT 5;

-- 2: sorted
CREATE OR REPLACE TEMP TABLE "sorted" AS
SELECT * FROM "countries" AS t ORDER BY "continent" ASC NULLS LAST, "pop_est" DESC NULLS LAST;

