-- 1: without_capital
CREATE OR REPLACE TEMP TABLE "without_capital" AS
SELECT * FROM "countries" AS t WHERE NOT EXISTS (SELECT 1 FROM "cities" AS r WHERE ST_Intersects(t."geom", r."geom"));

