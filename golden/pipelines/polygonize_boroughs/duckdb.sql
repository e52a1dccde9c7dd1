-- 1: faces
CREATE OR REPLACE TEMP TABLE "faces" AS
SELECT CAST(row_number() OVER (ORDER BY ST_XMin(d.g), ST_YMin(d.g), ST_AsWKB(ST_Normalize(d.g))::BLOB) AS BIGINT) AS "id", d.g AS "geom" FROM (SELECT UNNEST(ST_Dump(ST_Polygonize([ST_Union_Agg(w.l)]))).geom AS g FROM (SELECT CASE WHEN ST_GeometryType(t."geom") IN ('POLYGON', 'MULTIPOLYGON') THEN ST_Boundary(t."geom") WHEN ST_GeometryType(t."geom") IN ('LINESTRING', 'MULTILINESTRING') THEN t."geom" END AS l FROM "boroughs" AS t) AS w WHERE w.l IS NOT NULL AND NOT ST_IsEmpty(w.l)) AS d;

