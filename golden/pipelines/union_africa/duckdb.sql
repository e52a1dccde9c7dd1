-- 1: africa, merged
CREATE OR REPLACE TEMP TABLE "merged" AS
WITH "africa" AS (SELECT * FROM "countries" AS t WHERE "continent" = 'Africa')
SELECT count(*) AS "count", ST_Union_Agg("geom") AS "geom" FROM "africa" AS t;

