-- 1: without_capital
DROP TABLE IF EXISTS "without_capital";
CREATE TEMP TABLE "without_capital" AS
SELECT * FROM "countries" AS t WHERE NOT EXISTS (SELECT 1 FROM "cities" AS r WHERE ST_Intersects(t."geom", r."geom"));

