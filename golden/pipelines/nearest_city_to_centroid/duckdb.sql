-- 1: centres, nearest
CREATE OR REPLACE TEMP TABLE "nearest" AS
WITH "centres" AS (SELECT "pop_est", "continent", "name", "iso_a3", "gdp_md_est", ST_Centroid("geom") AS "geom" FROM "countries" AS t)
SELECT t.*, n.* FROM "centres" AS t LEFT JOIN LATERAL (SELECT ST_Distance(t."geom", r."geom") AS "distance_deg", r."name" AS "ref_name" FROM "cities" AS r WHERE NOT ST_IsEmpty(t."geom") AND NOT ST_IsEmpty(r."geom") ORDER BY "distance_deg", md5(lower(ST_AsHEXWKB(r."geom"))) LIMIT 1) AS n ON true;

