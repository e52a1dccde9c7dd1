-- 1: rings
DROP TABLE IF EXISTS "rings";
CREATE TEMP TABLE "rings" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'ST_GeometryCollection' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "countries" AS t;

-- 2: extended
-- runs natively: extend_dangles max_distance=2: each dangling end's ray cut by the other lines found through an R-tree, the nearest crossing kept
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "extended";
CREATE TEMP TABLE "extended" AS
SELECT t.* FROM "rings" AS t, (SELECT 'geomill: extend_dangles max_distance=2 runs on the native backend: it follows the lines as a network'::regclass) AS native_only(e) WHERE native_only.e IS NULL;

