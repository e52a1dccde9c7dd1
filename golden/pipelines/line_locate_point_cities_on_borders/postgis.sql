-- 1: borders
DROP TABLE IF EXISTS "borders";
CREATE TEMP TABLE "borders" AS
SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", CASE WHEN ST_GeometryType("geom") = 'ST_GeometryCollection' THEN NULL WHEN ST_IsEmpty(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) THEN ST_Force2D(ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1)))) ELSE ST_Multi(ST_CollectionExtract(ST_Boundary("geom"), GREATEST(ST_Dimension("geom"), 1))) END AS "geom" FROM "countries" AS t;

-- 2: located
DROP TABLE IF EXISTS "located";
CREATE TEMP TABLE "located" AS
SELECT t.*, n.* FROM "cities" AS t LEFT JOIN LATERAL (SELECT c."distance", c."ref_name", c."iso_a3", CASE WHEN ST_GeometryType(CASE WHEN ST_GeometryType(c."__geomill_line") = 'ST_LineString' THEN c."__geomill_line" ELSE ST_LineMerge(c."__geomill_line", true) END) = 'ST_LineString' THEN CASE WHEN ST_Length(CASE WHEN ST_GeometryType(c."__geomill_line") = 'ST_LineString' THEN c."__geomill_line" ELSE ST_LineMerge(c."__geomill_line", true) END) = 0 THEN 0.0 ELSE ST_LineLocatePoint(CASE WHEN ST_GeometryType(c."__geomill_line") = 'ST_LineString' THEN c."__geomill_line" ELSE ST_LineMerge(c."__geomill_line", true) END, t."geom") END END AS "fraction" FROM (SELECT ST_Distance(t."geom", r."geom") AS "distance", r."geom" AS "__geomill_line", r."name" AS "ref_name", r."iso_a3" AS "iso_a3", md5(encode(ST_AsBinary(r."geom"), 'hex')) AS "__tie" FROM "borders" AS r WHERE NOT ST_IsEmpty(t."geom") AND ST_GeometryType(t."geom") = 'ST_Point' AND ST_GeometryType(r."geom") IN ('ST_LineString', 'ST_MultiLineString') ORDER BY r."geom" <-> t."geom" LIMIT 4) AS c WHERE c."distance" IS NOT NULL ORDER BY c."distance", c."__tie" LIMIT 1) AS n ON true;

