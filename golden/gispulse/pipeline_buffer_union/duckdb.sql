-- 1: in_europe__0
CREATE OR REPLACE TEMP TABLE "in_europe__0" AS
SELECT * FROM "countries" AS t WHERE (coalesce("continent" = 'Europe', false));

-- 2: in_europe__1
-- runs natively: dissolve: one overlay sweep over every polygon edge (shared edges cancel)
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "in_europe__1" AS
SELECT ST_Union_Agg("geom") AS "geom" FROM "in_europe__0" AS t;

-- 3: in_europe, halo, merged__0, merged
CREATE OR REPLACE TEMP TABLE "merged" AS
WITH "in_europe" AS (SELECT * FROM "input" AS t WHERE EXISTS (SELECT 1 FROM "in_europe__1" AS r WHERE ST_Within(t."geom", r."geom"))),
"halo__1" AS (SELECT "name", ST_Transform("geom", 'EPSG:4326', 'EPSG:3035', always_xy := true) AS "geom" FROM "in_europe" AS t),
"halo__2" AS (SELECT "name", ST_Buffer("geom", 25000, 4) AS "geom" FROM "halo__1" AS t),
"halo" AS (SELECT "name", ST_Transform("geom", 'EPSG:3035', 'EPSG:4326', always_xy := true) AS "geom" FROM "halo__2" AS t),
"merged__0" AS (SELECT count(*) AS "count", ST_Union_Agg("geom") AS "geom" FROM "halo" AS t)
SELECT "geom" FROM "merged__0" AS t;

