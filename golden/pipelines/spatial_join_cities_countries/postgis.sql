-- 1: joined
DROP TABLE IF EXISTS "joined";
CREATE TEMP TABLE "joined" AS
SELECT t.*, r."name" AS "ref_name", r."continent" AS "continent" FROM "cities" AS t JOIN "countries" AS r ON ST_Intersects(t."geom", r."geom");

