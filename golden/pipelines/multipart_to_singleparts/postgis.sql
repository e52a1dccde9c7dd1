-- 1: parts
DROP TABLE IF EXISTS "parts";
CREATE TEMP TABLE "parts" AS
SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", l.part AS "geom", CAST(l.n AS BIGINT) AS "part" FROM "countries" AS t LEFT JOIN LATERAL ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END) WITH ORDINALITY AS l(path, part, n) ON true;

