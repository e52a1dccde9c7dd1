-- 1: africa
CREATE OR REPLACE TEMP TABLE "africa" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Africa';

-- 2: rest
CREATE OR REPLACE TEMP TABLE "rest" AS
SELECT * FROM (SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", COALESCE(ST_Difference(t."geom", (SELECT ST_Union_Agg(r."geom") FROM "africa" AS r WHERE ST_Intersects(t."geom", r."geom"))), t."geom") AS "geom" FROM "countries" AS t) AS e WHERE NOT ST_IsEmpty(e."geom");

