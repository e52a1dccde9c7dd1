-- 1: centres
CREATE OR REPLACE TEMP TABLE "centres" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Centroid("geom") AS "geom" FROM "boroughs" AS t;

-- 2: edges
CREATE OR REPLACE TEMP TABLE "edges" AS
SELECT t."BoroCode", t."BoroName", t."Shape_Leng", t."Shape_Area", t.__part AS "geom", CAST(CASE WHEN t.__part IS NULL THEN NULL ELSE t.__n END AS BIGINT) AS "segment" FROM (SELECT t.*, UNNEST(coalesce(nullif(flatten([[ST_MakeLine(ST_PointN(l.geom, i::INTEGER), ST_PointN(l.geom, (i + 1)::INTEGER)) for i in range(1, ST_NPoints(l.geom))] for l in flatten([ST_Dump(CASE WHEN ST_Dimension(d.geom) = 2 THEN ST_Boundary(d.geom) WHEN ST_Dimension(d.geom) = 1 THEN d.geom END) for d in ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END)])]), []), [NULL])) AS __part, generate_subscripts(coalesce(nullif(flatten([[ST_MakeLine(ST_PointN(l.geom, i::INTEGER), ST_PointN(l.geom, (i + 1)::INTEGER)) for i in range(1, ST_NPoints(l.geom))] for l in flatten([ST_Dump(CASE WHEN ST_Dimension(d.geom) = 2 THEN ST_Boundary(d.geom) WHEN ST_Dimension(d.geom) = 1 THEN d.geom END) for d in ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END)])]), []), [NULL]), 1) AS __n FROM "boroughs" AS t) AS t;

-- 3: paths
-- runs natively: shortest_path cost=length_m(x0.3048006096012192) oneway=BoroCode: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "paths" AS
SELECT t.* FROM "edges" AS t, (SELECT error('geomill: shortest_path cost=length_m(x0.3048006096012192) oneway=BoroCode runs on the native backend: DuckDB has no graph search')) AS native_only(e) WHERE native_only.e IS NULL;

