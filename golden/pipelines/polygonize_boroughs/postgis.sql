-- 1: faces
DROP TABLE IF EXISTS "faces";
CREATE TEMP TABLE "faces" AS
SELECT CAST(row_number() OVER (ORDER BY ST_XMin(d.g), ST_YMin(d.g), ST_AsBinary(ST_Normalize(d.g))) AS BIGINT) AS "id", d.g AS "geom" FROM (SELECT (ST_Dump(ST_Polygonize(ARRAY[ST_Union(w.l)]))).geom AS g FROM (SELECT CASE WHEN ST_GeometryType(t."geom") IN ('ST_Polygon', 'ST_MultiPolygon') THEN ST_Boundary(t."geom") WHEN ST_GeometryType(t."geom") IN ('ST_LineString', 'ST_MultiLineString') THEN t."geom" END AS l FROM "boroughs" AS t) AS w WHERE w.l IS NOT NULL AND NOT ST_IsEmpty(w.l)) AS d;

