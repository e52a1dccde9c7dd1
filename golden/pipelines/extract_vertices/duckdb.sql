-- 1: corners
CREATE OR REPLACE TEMP TABLE "corners" AS
SELECT t."BoroCode", t."BoroName", t."Shape_Leng", t."Shape_Area", t.__part.geom AS "geom", CAST(CASE WHEN t.__part IS NULL THEN NULL ELSE t.__n END AS BIGINT) AS "n" FROM (SELECT t.*, UNNEST(coalesce(nullif(ST_Dump(ST_Points(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END)), []), [NULL])) AS __part, generate_subscripts(coalesce(nullif(ST_Dump(ST_Points(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END)), []), [NULL]), 1) AS __n FROM "boroughs" AS t) AS t;

