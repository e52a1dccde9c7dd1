-- 1: multi
DROP TABLE IF EXISTS "multi";
CREATE TEMP TABLE "multi" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_IsEmpty("geom") AND ST_GeometryType("geom") IN ('ST_Point', 'ST_LineString', 'ST_Polygon') THEN ST_SetSRID(ST_CollectionExtract(ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'), ST_Dimension("geom") + 1), ST_SRID("geom")) ELSE ST_Multi("geom") END AS "geom" FROM "countries" AS t;

