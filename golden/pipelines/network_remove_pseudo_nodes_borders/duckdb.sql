-- 1: rings, noded
CREATE OR REPLACE TEMP TABLE "noded" AS
WITH "rings" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'GEOMETRYCOLLECTION' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "countries" AS t)
SELECT * FROM (WITH s AS (SELECT t.*, (t."geom" IS NOT NULL AND NOT ST_IsEmpty(t."geom") AND ST_GeometryType(t."geom") IN ('LINESTRING', 'MULTILINESTRING') AND ST_Length(t."geom") > 0) AS __line FROM "rings" AS t), n AS (SELECT p.__piece, ST_LineInterpolatePoint(p.__piece, 0.5) AS __middle FROM (SELECT UNNEST(ST_Dump(ST_Union_Agg(s."geom"))).geom AS __piece FROM s WHERE s.__line) AS p), e AS (SELECT 1e-9 * GREATEST(MAX(ST_XMax(s."geom")) - MIN(ST_XMin(s."geom")), MAX(ST_YMax(s."geom")) - MIN(ST_YMin(s."geom")), 1) AS eps FROM s WHERE s.__line) SELECT s."pop_est", s."continent", s."name", s."iso_a3", s."gdp_md_est", n.__piece AS "geom" FROM s, e, n WHERE s.__line AND ST_DWithin(s."geom", n.__middle, e.eps) UNION ALL SELECT s."pop_est", s."continent", s."name", s."iso_a3", s."gdp_md_est", s."geom" AS "geom" FROM s WHERE NOT s.__line) AS noded;

-- 2: merged
-- runs natively: remove_pseudo_nodes fields=[continent]: line ends hashed by their exact coordinates, the lines meeting two at a node grouped and merged by GEOS's line merger
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "merged" AS
SELECT t.* FROM "noded" AS t, (SELECT error('geomill: remove_pseudo_nodes fields=[continent] runs on the native backend: it follows the lines as a network')) AS native_only(e) WHERE native_only.e IS NULL;

