-- 1: problems
CREATE OR REPLACE TEMP TABLE "problems" AS
WITH geomill_checked AS (SELECT t."iso_a3" AS "geomill_key", t."geom" AS "geomill_geom", geomill_is_valid_reason(ST_AsWKB(t."geom")) AS "geomill_reason" FROM "countries" AS t WHERE t."geom" IS NOT NULL AND NOT ST_IsEmpty(t."geom")),
geomill_valid_polygons AS (SELECT c."geomill_key", c."geomill_geom" FROM geomill_checked AS c WHERE c."geomill_reason" = 'Valid Geometry' AND ST_GeometryType(c."geomill_geom") IN ('POLYGON', 'MULTIPOLYGON')),
geomill_line_parts AS (SELECT s."geomill_key", COALESCE(s.d.path[1], 0) AS "geomill_part", s.d.geom AS "geomill_geom" FROM (SELECT c."geomill_key", unnest(ST_Dump(c."geomill_geom")) AS d FROM geomill_checked AS c WHERE ST_GeometryType(c."geomill_geom") IN ('LINESTRING', 'MULTILINESTRING')) AS s),
geomill_line_ends AS (SELECT l."geomill_key", l."geomill_part", ST_StartPoint(l."geomill_geom") AS "geomill_geom" FROM geomill_line_parts AS l WHERE NOT ST_IsEmpty(l."geomill_geom") AND NOT ST_IsClosed(l."geomill_geom") UNION ALL SELECT l."geomill_key", l."geomill_part", ST_EndPoint(l."geomill_geom") AS "geomill_geom" FROM geomill_line_parts AS l WHERE NOT ST_IsEmpty(l."geomill_geom") AND NOT ST_IsClosed(l."geomill_geom"))
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'null_geometry' AS "problem", CAST(NULL AS TEXT) AS "field", 'the geometry is NULL' AS "reason", CAST(NULL AS GEOMETRY) AS "geom" FROM "countries" AS t WHERE t."geom" IS NULL
UNION ALL
SELECT t."iso_a3" AS "feature", CAST(NULL AS TEXT) AS "related", 'empty_geometry' AS "problem", CAST(NULL AS TEXT) AS "field", 'the geometry is empty' AS "reason", t."geom" AS "geom" FROM "countries" AS t WHERE t."geom" IS NOT NULL AND ST_IsEmpty(t."geom")
UNION ALL
SELECT c."geomill_key" AS "feature", CAST(NULL AS TEXT) AS "related", 'invalid' AS "problem", CAST(NULL AS TEXT) AS "field", c."geomill_reason" AS "reason", ST_SetCRS(ST_Point(TRY_CAST(regexp_extract(c."geomill_reason", '\[([^ \]]+) ([^\]]+)\]$', 1) AS DOUBLE), TRY_CAST(regexp_extract(c."geomill_reason", '\[([^ \]]+) ([^\]]+)\]$', 2) AS DOUBLE)), ST_CRS(c."geomill_geom")) AS "geom" FROM geomill_checked AS c WHERE c."geomill_reason" <> 'Valid Geometry'
UNION ALL
SELECT c."geomill_key" AS "feature", CAST(NULL AS TEXT) AS "related", 'self_intersection' AS "problem", CAST(NULL AS TEXT) AS "field", 'the line crosses or touches itself' AS "reason", c."geomill_geom" AS "geom" FROM geomill_checked AS c WHERE ST_GeometryType(c."geomill_geom") IN ('LINESTRING', 'MULTILINESTRING') AND NOT ST_IsSimple(c."geomill_geom")
UNION ALL
SELECT a."geomill_key" AS "feature", b."geomill_key" AS "related", 'overlap' AS "problem", CAST(NULL AS TEXT) AS "field", 'the interiors of the two polygons overlap' AS "reason", ST_CollectionExtract(ST_Intersection(a."geomill_geom", b."geomill_geom"), 3) AS "geom" FROM geomill_valid_polygons AS a JOIN geomill_valid_polygons AS b ON a."geomill_key" < b."geomill_key" AND ST_Intersects(a."geomill_geom", b."geomill_geom") AND NOT ST_Touches(a."geomill_geom", b."geomill_geom")
UNION ALL
SELECT CAST(NULL AS TEXT) AS "feature", CAST(NULL AS TEXT) AS "related", 'gap' AS "problem", CAST(NULL AS TEXT) AS "field", 'a hole in the union of the polygons' AS "reason", ST_MakePolygon(ST_InteriorRingN(u.d.geom, CAST(r.i AS INTEGER))) AS "geom" FROM (SELECT unnest(ST_Dump(ST_Union_Agg(p."geomill_geom"))) AS d FROM geomill_valid_polygons AS p) AS u, range(1, ST_NumInteriorRings(u.d.geom) + 1) AS r(i)
UNION ALL
SELECT e."geomill_key" AS "feature", CAST(NULL AS TEXT) AS "related", 'dangle' AS "problem", CAST(NULL AS TEXT) AS "field", 'the line ends without touching another line' AS "reason", e."geomill_geom" AS "geom" FROM geomill_line_ends AS e WHERE NOT EXISTS (SELECT 1 FROM geomill_line_parts AS o WHERE NOT (o."geomill_key" IS NOT DISTINCT FROM e."geomill_key" AND o."geomill_part" = e."geomill_part") AND ST_Intersects(o."geomill_geom", e."geomill_geom"));

