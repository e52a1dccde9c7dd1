-- 1: multi
CREATE OR REPLACE TEMP TABLE "multi" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsEmpty("geom") AND ST_GeometryType("geom") IN ('POINT', 'LINESTRING', 'POLYGON') THEN ST_CollectionExtract(ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'), ST_Dimension("geom") + 1) ELSE ST_Multi("geom") END AS "geom" FROM "countries" AS t;

