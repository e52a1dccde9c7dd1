-- 1: counted
DROP TABLE IF EXISTS "counted";
CREATE TEMP TABLE "counted" AS
SELECT t.*, a.* FROM "countries" AS t LEFT JOIN LATERAL (SELECT count(*) AS "count", count(r."name") AS "name_count" FROM "cities" AS r WHERE ST_Within(r."geom", t."geom")) AS a ON true;

