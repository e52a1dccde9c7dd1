-- 1: hexes
-- runs natively: hexagon grid of 5000 over the layer's extent, cells touching a feature: cells enumerated over the extent, tested against an R-tree of the features when only touching cells are kept
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "hexes" AS
SELECT t.* FROM "boroughs" AS t, (SELECT error('geomill: the hexagon grid of 5000 over the layer''s extent, cells touching a feature runs on the native backend: it is made from the whole layer')) AS native_only(e) WHERE native_only.e IS NULL;

