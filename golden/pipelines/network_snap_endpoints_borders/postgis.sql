-- 1: rings
DROP TABLE IF EXISTS "rings";
CREATE TEMP TABLE "rings" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'ST_GeometryCollection' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "countries" AS t;

-- 2: snapped
-- runs natively: snap_endpoints tolerance=0.5 target=lines: endpoints sorted by x then y, each moved onto the nearest kept endpoint (or line) of another line within the tolerance, found through an R-tree
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "snapped";
CREATE TEMP TABLE "snapped" AS
SELECT t.* FROM "rings" AS t, (SELECT 'geomill: snap_endpoints tolerance=0.5 target=lines runs on the native backend: it follows the lines as a network'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

