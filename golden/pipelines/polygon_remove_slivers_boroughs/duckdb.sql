-- 1: cleaned
-- runs natively: remove_slivers max_area=1000000 max_thinness=0.2 keep_isolated=true: slivers found by area and thinness, each unioned into the neighbour sharing the longest border (an R-tree)
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "cleaned" AS
SELECT t.* FROM "boroughs" AS t, (SELECT error('geomill: remove_slivers max_area=1000000 max_thinness=0.2 keep_isolated=true runs on the native backend: each feature''s answer depends on its neighbours')) AS native_only(e) WHERE native_only.e IS NULL;

