-- 1: cleaned
-- runs natively: fix_overlaps owner=first order_by=name: features ranked by the rule, each cut by the union of the higher-ranked features it meets (an R-tree), rows in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "cleaned";
CREATE TEMP TABLE "cleaned" AS
SELECT t.* FROM "countries" AS t, (SELECT 'geomill: fix_overlaps owner=first order_by=name runs on the native backend: each feature''s answer depends on its neighbours'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

