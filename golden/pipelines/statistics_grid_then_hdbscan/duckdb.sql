-- 1: squares, groups
-- runs natively: square grid of 10 over the layer's extent: cells enumerated over the extent, tested against an R-tree of the features when only touching cells are kept; then HDBSCAN of the points (great-circle distances), min_cluster_size=10, min_samples=10: the field's values over every row, then each row's value
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "groups" AS
WITH "squares" AS (SELECT t.* FROM "countries" AS t, (SELECT error('geomill: the square grid of 10 over the layer''s extent runs on the native backend: it is made from the whole layer')) AS native_only(e) WHERE native_only.e IS NULL)
SELECT t.* FROM "squares" AS t, (SELECT error('geomill: HDBSCAN of the points (great-circle distances), min_cluster_size=10, min_samples=10 runs on the native backend: it needs the whole layer''s values')) AS native_only(e) WHERE native_only.e IS NULL;

