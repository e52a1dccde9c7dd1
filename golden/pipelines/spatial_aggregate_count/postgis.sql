-- 1: counted
DROP TABLE IF EXISTS "counted";
CREATE TEMP TABLE "counted" AS
SELECT t.*, (SELECT count(*) FROM "cities" AS r WHERE ST_Within(r."geom", t."geom")) AS "count", (SELECT count(r."name") FROM "cities" AS r WHERE ST_Within(r."geom", t."geom")) AS "name_count" FROM "countries" AS t;

