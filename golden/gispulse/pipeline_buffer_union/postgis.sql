-- 1: in_europe__0
DROP TABLE IF EXISTS "in_europe__0";
CREATE TEMP TABLE "in_europe__0" AS
SELECT * FROM "countries" AS t WHERE (coalesce("continent" = 'Europe', false));

-- 2: in_europe__1
-- runs natively: dissolve: one overlay sweep over every polygon edge (shared edges cancel)
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "in_europe__1";
CREATE TEMP TABLE "in_europe__1" AS
SELECT ST_Union("geom") AS "geom" FROM "in_europe__0" AS t;

-- 3: in_europe, halo, merged__0, merged
DROP TABLE IF EXISTS "merged";
CREATE TEMP TABLE "merged" AS
WITH "in_europe" AS (SELECT * FROM "input" AS t WHERE EXISTS (SELECT 1 FROM "in_europe__1" AS r WHERE ST_Within(t."geom", r."geom"))),
"halo__1" AS MATERIALIZED (SELECT "name", ST_Transform(ST_SetSRID("geom", 4326), 3035) AS "geom" FROM "in_europe" AS t),
"halo__2" AS MATERIALIZED (SELECT "name", ST_Buffer("geom", 25000, 4) AS "geom" FROM "halo__1" AS t),
"halo" AS MATERIALIZED (SELECT "name", ST_Transform(ST_SetSRID("geom", 3035), 4326) AS "geom" FROM "halo__2" AS t),
"merged__0" AS (SELECT count(*) AS "count", ST_Union("geom") AS "geom" FROM "halo" AS t)
SELECT "geom" FROM "merged__0" AS t;

