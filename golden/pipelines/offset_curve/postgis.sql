-- 1: shores
DROP TABLE IF EXISTS "shores";
CREATE TEMP TABLE "shores" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_GeometryType("geom") = 'ST_GeometryCollection' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "boroughs" AS t;

-- 2: inland
-- runs natively: per-feature geometry, rows in parallel: geom = GEOS offset curve
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "inland";
CREATE TEMP TABLE "inland" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_Dimension("geom") = 1 AND NOT ST_IsEmpty("geom") THEN ST_OffsetCurve(ST_Force2D("geom"), -99.99980000000001, 'quad_segs=8 join=mitre mitre_limit=5') END AS "geom" FROM "shores" AS t;

