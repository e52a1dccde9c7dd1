-- 1: catchments
-- runs natively: voronoi envelope=[-180.0, -90.0, 180.0, 90.0] clip=true: GEOS over every feature's site at once, each row given the cell its site lies in
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "catchments" AS
SELECT t.* FROM "countries" AS t, (SELECT error('geomill: voronoi envelope=[-180.0, -90.0, 180.0, 90.0] clip=true runs on the native backend: DuckDB''s ST_VoronoiDiagram takes no envelope to extend the diagram to')) AS native_only(e) WHERE native_only.e IS NULL;

