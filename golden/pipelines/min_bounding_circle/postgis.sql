-- 1: circles
-- runs natively: per-feature geometry, rows in parallel: geom = smallest enclosing circle of the convex hull's vertices (Welzl), drawn with 16 vertices a quarter
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "circles";
CREATE TEMP TABLE "circles" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsEmpty("geom") THEN ST_Force2D("geom") WHEN ST_GeometryType(ST_MinimumBoundingCircle(ST_ConvexHull(ST_Points(ST_Force2D("geom"))), 16)) = 'ST_Polygon' THEN ST_MakePolygon(ST_SetPoint(ST_ExteriorRing(ST_MinimumBoundingCircle(ST_ConvexHull(ST_Points(ST_Force2D("geom"))), 16)), -1, ST_StartPoint(ST_ExteriorRing(ST_MinimumBoundingCircle(ST_ConvexHull(ST_Points(ST_Force2D("geom"))), 16))))) ELSE ST_MinimumBoundingCircle(ST_ConvexHull(ST_Points(ST_Force2D("geom"))), 16) END AS "geom" FROM "countries" AS t;

