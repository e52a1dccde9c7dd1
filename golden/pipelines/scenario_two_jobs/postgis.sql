-- job prepare
-- 1: europe
DROP TABLE IF EXISTS "europe";
CREATE TEMP TABLE "europe" AS
SELECT * FROM "countries" AS t WHERE "continent" = 'Europe';

-- job report
-- 1: counts
DROP TABLE IF EXISTS "counts";
CREATE TEMP TABLE "counts" AS
SELECT t.*, a.* FROM "countries" AS t LEFT JOIN LATERAL (SELECT count(*) AS "count" FROM "cities" AS r WHERE ST_Intersects(r."geom", t."geom")) AS a ON true;

