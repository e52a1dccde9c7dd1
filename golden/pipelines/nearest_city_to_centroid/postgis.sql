-- 1: centres, nearest
DROP TABLE IF EXISTS "nearest";
CREATE TEMP TABLE "nearest" AS
WITH "centres" AS MATERIALIZED (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Centroid("geom") AS "geom" FROM "countries" AS t)
SELECT t.*, n.* FROM "centres" AS t LEFT JOIN LATERAL (SELECT c."distance_deg", c."ref_name" FROM (SELECT ST_Distance(t."geom", r."geom") AS "distance_deg", r."name" AS "ref_name", md5(encode(ST_AsBinary(r."geom"), 'hex')) AS "__tie" FROM "cities" AS r WHERE NOT ST_IsEmpty(t."geom") ORDER BY r."geom" <-> t."geom" LIMIT 4) AS c WHERE c."distance_deg" IS NOT NULL ORDER BY c."distance_deg", c."__tie" LIMIT 1) AS n ON true;

