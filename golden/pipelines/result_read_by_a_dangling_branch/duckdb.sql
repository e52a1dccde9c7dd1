-- 1: s0
CREATE OR REPLACE TEMP TABLE "s0" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom", CAST(0 AS BIGINT) AS "tmp_0" FROM "countries" AS t;

-- 2: s1
CREATE OR REPLACE TEMP TABLE "s1" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", "geom" FROM "s0" AS t;

