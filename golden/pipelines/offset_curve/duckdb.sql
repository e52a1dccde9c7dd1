-- 1: shores
CREATE OR REPLACE TEMP TABLE "shores" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_GeometryType("geom") = 'GEOMETRYCOLLECTION' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "boroughs" AS t;

-- 2: inland
-- runs natively: per-feature geometry, rows in parallel: geom = GEOS 3.12+'s offset curve: the GEOS buffer's boundary on the offset side
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "inland" AS
SELECT t.* FROM "shores" AS t, (SELECT error('geomill: OffsetCurve(-99.99980000000001 crs units, join=mitre, 8 seg, mitre_limit=5) runs on the native backend: DuckDB spatial has no function giving the same shape')) AS native_only(e) WHERE native_only.e IS NULL;

