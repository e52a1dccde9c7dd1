-- 1: cleaned
-- runs natively: fix_gaps max_area=0.5: the union of every polygon, its holes within the threshold each given to the feature whose boundary covers the most of it (an R-tree finds the candidates)
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "cleaned";
CREATE TEMP TABLE "cleaned" AS
SELECT t.* FROM "countries" AS t, (SELECT 'geomill: fix_gaps max_area=0.5 runs on the native backend: each feature''s answer depends on its neighbours'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

