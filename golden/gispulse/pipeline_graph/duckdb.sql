-- 1: calc
CREATE OR REPLACE TEMP TABLE "calc" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", (CAST("pop_est" AS FLOAT8) / NULLIF(1000000, 0)) AS "pm" FROM "input" AS t;

-- 2: eu
CREATE OR REPLACE TEMP TABLE "eu" AS
SELECT * FROM "calc" AS t WHERE (coalesce("continent" = 'Europe', false));

-- 3: big, ranked
CREATE OR REPLACE TEMP TABLE "ranked" AS
WITH "big" AS (SELECT * FROM "calc" AS t WHERE (coalesce("pm" > 100, false)))
SELECT * FROM "big" AS t ORDER BY "continent" ASC NULLS LAST, "pm" DESC NULLS LAST;

