-- 1: parts, continents
CREATE OR REPLACE TEMP TABLE "continents" AS
WITH "parts" AS (SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", t.__part.geom AS "geom", CAST(CASE WHEN t.__part IS NULL THEN NULL ELSE t.__n END AS BIGINT) AS "part" FROM (SELECT t.*, UNNEST(coalesce(nullif(ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END), []), [NULL])) AS __part, generate_subscripts(coalesce(nullif(ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END), []), [NULL]), 1) AS __n FROM "countries" AS t) AS t)
SELECT "continent", count("part") AS "part_count", sum("pop_est") AS "pop_est_sum", ST_Collect(list_filter(flatten(list(list_transform(ST_Dump("geom"), lambda geomill_dumped: geomill_dumped.geom) ORDER BY md5(lower(ST_AsHEXWKB("geom")))) FILTER (WHERE NOT ST_IsEmpty("geom"))), lambda geomill_part: NOT ST_IsEmpty(geomill_part))) AS "geom" FROM "parts" AS t GROUP BY "continent";

