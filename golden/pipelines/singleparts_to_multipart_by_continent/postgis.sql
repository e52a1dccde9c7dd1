-- 1: parts, continents
DROP TABLE IF EXISTS "continents";
CREATE TEMP TABLE "continents" AS
WITH "parts" AS (SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", l.part AS "geom", CAST(l.n AS BIGINT) AS "part" FROM "countries" AS t LEFT JOIN LATERAL ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END) WITH ORDINALITY AS l(path, part, n) ON true)
SELECT "continent", count("part") AS "part_count", sum("pop_est") AS "pop_est_sum", ST_Collect(ARRAY(SELECT d.part FROM unnest(array_agg("geom" ORDER BY md5(encode(ST_AsBinary("geom"), 'hex'))) FILTER (WHERE NOT ST_IsEmpty("geom"))) WITH ORDINALITY AS s(whole, i), ST_Dump(s.whole) WITH ORDINALITY AS d(path, part, j) WHERE NOT ST_IsEmpty(d.part) ORDER BY s.i, d.j)) AS "geom" FROM "parts" AS t GROUP BY "continent";

