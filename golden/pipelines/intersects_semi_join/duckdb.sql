-- 1: with_capital
CREATE OR REPLACE TEMP TABLE "with_capital" AS
SELECT * FROM "countries" AS t WHERE EXISTS (SELECT 1 FROM "cities" AS r WHERE ST_Intersects(t."geom", r."geom"));

