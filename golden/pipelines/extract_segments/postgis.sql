-- 1: edges
DROP TABLE IF EXISTS "edges";
CREATE TEMP TABLE "edges" AS
SELECT t."BoroCode", t."BoroName", t."Shape_Leng", t."Shape_Area", l.part AS "geom", CAST(l.n AS BIGINT) AS "segment" FROM "boroughs" AS t LEFT JOIN LATERAL ST_DumpSegments(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END) WITH ORDINALITY AS l(path, part, n) ON true;

