-- 1: africa
CREATE OR REPLACE TEMP TABLE "africa" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Africa';

-- 2: clipped
CREATE OR REPLACE TEMP TABLE "clipped" AS
SELECT t."name", ST_Intersection(t."geom", m."geom") AS "geom" FROM "cities" AS t, (SELECT ST_Union_Agg(r."geom") AS "geom" FROM "africa" AS r) AS m WHERE ST_Intersects(t."geom", m."geom");

