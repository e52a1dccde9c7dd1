-- 1: centres
DROP TABLE IF EXISTS "centres";
CREATE TEMP TABLE "centres" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Centroid("geom") AS "geom" FROM "boroughs" AS t;

-- 2: edges
DROP TABLE IF EXISTS "edges";
CREATE TEMP TABLE "edges" AS
SELECT t."BoroCode", t."BoroName", t."Shape_Leng", t."Shape_Area", l.part AS "geom", CAST(l.n AS BIGINT) AS "segment" FROM "boroughs" AS t LEFT JOIN LATERAL ST_DumpSegments(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END) WITH ORDINALITY AS l(path, part, n) ON true;

-- 3: tree
-- runs natively: spanning_tree cost=length_m(x0.3048006096012192) undirected: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "tree";
CREATE TEMP TABLE "tree" AS
SELECT t.* FROM "edges" AS t, (SELECT 'geomill: spanning_tree cost=length_m(x0.3048006096012192) undirected runs on the native backend: its pgRouting SQL is not written yet'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

-- 4: served
-- runs natively: allocation cost=field BoroCode undirected: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "served";
CREATE TEMP TABLE "served" AS
SELECT t.* FROM "edges" AS t, (SELECT 'geomill: allocation cost=field BoroCode undirected runs on the native backend: its pgRouting SQL is not written yet'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

-- 5: parts
-- runs natively: connectivity cost=length_m(x0.3048006096012192) directed: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "parts";
CREATE TEMP TABLE "parts" AS
SELECT t.* FROM "served" AS t, (SELECT 'geomill: connectivity cost=length_m(x0.3048006096012192) directed runs on the native backend: its pgRouting SQL is not written yet'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

-- 6: reach
-- runs natively: isochrone bands=[5000.0, 20000.0] polygons cost=length_m(x0.3048006096012192) undirected: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "reach";
CREATE TEMP TABLE "reach" AS
SELECT t.* FROM "edges" AS t, (SELECT 'geomill: isochrone bands=[5000.0, 20000.0] polygons cost=length_m(x0.3048006096012192) undirected runs on the native backend: its pgRouting SQL is not written yet'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

