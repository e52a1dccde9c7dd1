-- 1: tree
-- runs natively: point_spanning_tree cost=geodesic_length_m undirected: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "tree";
CREATE TEMP TABLE "tree" AS
SELECT t.* FROM "cities" AS t, (SELECT 'geomill: point_spanning_tree cost=geodesic_length_m undirected runs on the native backend: pgRouting needs the links as edges (a million for a thousand points)'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

