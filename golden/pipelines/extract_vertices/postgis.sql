-- 1: corners
DROP TABLE IF EXISTS "corners";
CREATE TEMP TABLE "corners" AS
SELECT t."BoroCode", t."BoroName", t."Shape_Leng", t."Shape_Area", l.part AS "geom", CAST(l.n AS BIGINT) AS "n" FROM "boroughs" AS t LEFT JOIN LATERAL ST_Dump(ST_Points(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END)) WITH ORDINALITY AS l(path, part, n) ON true;

