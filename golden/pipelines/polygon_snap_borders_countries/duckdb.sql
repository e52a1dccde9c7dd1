-- 1: cleaned
-- runs natively: snap_borders tolerance=0.01: features in row order, each snapped (GEOS snap) to the snapped features before it within the tolerance, then made valid
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "cleaned" AS
SELECT t.* FROM "countries" AS t, (SELECT error('geomill: snap_borders tolerance=0.01 runs on the native backend: each feature''s answer depends on its neighbours')) AS native_only(e) WHERE native_only.e IS NULL;

