-- 1: hexes
-- runs natively: hexagon grid of 5000 over the layer's extent, cells touching a feature: cells enumerated over the extent, tested against an R-tree of the features when only touching cells are kept
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "hexes";
CREATE TEMP TABLE "hexes" AS
SELECT t.* FROM "boroughs" AS t, (SELECT 'geomill: the hexagon grid of 5000 over the layer''s extent, cells touching a feature runs on the native backend: it is made from the whole layer'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

