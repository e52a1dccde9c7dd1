-- 1: places
DROP TABLE IF EXISTS "places";
CREATE TEMP TABLE "places" AS
SELECT "name", ST_Transform(ST_SetSRID("geom", 4326), 2263) AS "geom" FROM "cities" AS t;

-- 2: centres
DROP TABLE IF EXISTS "centres";
CREATE TEMP TABLE "centres" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Centroid("geom") AS "geom" FROM "boroughs" AS t;

-- 3: edges
DROP TABLE IF EXISTS "edges";
CREATE TEMP TABLE "edges" AS
SELECT t."BoroCode", t."BoroName", t."Shape_Leng", t."Shape_Area", l.part AS "geom", CAST(l.n AS BIGINT) AS "segment" FROM "boroughs" AS t LEFT JOIN LATERAL ST_DumpSegments(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END) WITH ORDINALITY AS l(path, part, n) ON true;

-- 4: costs
-- runs natively: od_matrix cost=length_m(x0.3048006096012192) undirected: a petgraph graph of the lines' end points, Dijkstra from each source in parallel
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "costs";
CREATE TEMP TABLE "costs" AS
WITH parts AS (SELECT ST_Length(p.g) * 0.3048006096012192 AS c, 0 AS dir, p.g FROM "edges" AS t, LATERAL (SELECT (ST_Dump(ST_Force2D(t."geom"))).geom AS g) AS p WHERE t."geom" IS NOT NULL AND GeometryType(p.g) = 'LINESTRING' AND ST_NPoints(p.g) >= 2), edges AS (SELECT row_number() OVER (ORDER BY md5(ST_AsBinary(g)), c, dir) AS id, c, dir, g, ST_X(ST_StartPoint(g)) AS ax, ST_Y(ST_StartPoint(g)) AS ay, ST_X(ST_EndPoint(g)) AS bx, ST_Y(ST_EndPoint(g)) AS by FROM parts WHERE c >= 0), nodes AS (SELECT row_number() OVER (ORDER BY x, y) AS nid, x, y FROM (SELECT ax AS x, ay AS y FROM edges UNION SELECT bx, by FROM edges) AS ends), o AS (SELECT q.k, q.p, CASE WHEN q.p IS NOT NULL THEN (SELECT n.nid FROM nodes AS n ORDER BY (n.x - ST_X(q.p)) * (n.x - ST_X(q.p)) + (n.y - ST_Y(q.p)) * (n.y - ST_Y(q.p)), n.nid LIMIT 1) END AS nid FROM (SELECT o."name" AS k, CASE WHEN o."geom" IS NULL OR ST_IsEmpty(o."geom") THEN NULL WHEN GeometryType(o."geom") = 'POINT' THEN ST_Force2D(o."geom") ELSE ST_Centroid(ST_Force2D(o."geom")) END AS p FROM "places" AS o) AS q), d AS (SELECT q.k, q.p, CASE WHEN q.p IS NOT NULL THEN (SELECT n.nid FROM nodes AS n ORDER BY (n.x - ST_X(q.p)) * (n.x - ST_X(q.p)) + (n.y - ST_Y(q.p)) * (n.y - ST_Y(q.p)), n.nid LIMIT 1) END AS nid FROM (SELECT o."BoroName" AS k, CASE WHEN o."geom" IS NULL OR ST_IsEmpty(o."geom") THEN NULL WHEN GeometryType(o."geom") = 'POINT' THEN ST_Force2D(o."geom") ELSE ST_Centroid(ST_Force2D(o."geom")) END AS p FROM "centres" AS o) AS q), m AS (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCost('WITH parts AS (SELECT ST_Length(p.g) * 0.3048006096012192 AS c, 0 AS dir, p.g FROM "edges" AS t, LATERAL (SELECT (ST_Dump(ST_Force2D(t."geom"))).geom AS g) AS p WHERE t."geom" IS NOT NULL AND GeometryType(p.g) = ''LINESTRING'' AND ST_NPoints(p.g) >= 2), edges AS (SELECT row_number() OVER (ORDER BY md5(ST_AsBinary(g)), c, dir) AS id, c, dir, g, ST_X(ST_StartPoint(g)) AS ax, ST_Y(ST_StartPoint(g)) AS ay, ST_X(ST_EndPoint(g)) AS bx, ST_Y(ST_EndPoint(g)) AS by FROM parts WHERE c >= 0), nodes AS (SELECT row_number() OVER (ORDER BY x, y) AS nid, x, y FROM (SELECT ax AS x, ay AS y FROM edges UNION SELECT bx, by FROM edges) AS ends) SELECT e.id, s.nid AS source, d.nid AS target, CASE WHEN e.dir >= 0 THEN e.c ELSE -1 END AS cost, CASE WHEN e.dir <= 0 THEN e.c ELSE -1 END AS reverse_cost FROM edges AS e JOIN nodes AS s ON s.x = e.ax AND s.y = e.ay JOIN nodes AS d ON d.x = e.bx AND d.y = e.by', (SELECT array_agg(DISTINCT o.nid) FROM o WHERE o.nid IS NOT NULL), (SELECT array_agg(DISTINCT d.nid) FROM d WHERE d.nid IS NOT NULL), true)) SELECT o.k AS "origin", d.k AS "destination", CASE WHEN o.nid = d.nid THEN 0.0 ELSE m.agg_cost END AS "cost", ST_MakeLine(o.p, d.p) AS "geom" FROM o CROSS JOIN d LEFT JOIN m ON m.start_vid = o.nid AND m.end_vid = d.nid;

