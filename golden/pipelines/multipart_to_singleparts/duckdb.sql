-- 1: parts
CREATE OR REPLACE TEMP TABLE "parts" AS
SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", t.__part.geom AS "geom", CAST(CASE WHEN t.__part IS NULL THEN NULL ELSE t.__n END AS BIGINT) AS "part" FROM (SELECT t.*, UNNEST(coalesce(nullif(ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END), []), [NULL])) AS __part, generate_subscripts(coalesce(nullif(ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END), []), [NULL]), 1) AS __n FROM "countries" AS t) AS t;

