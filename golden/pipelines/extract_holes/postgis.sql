-- 1: lakes
DROP TABLE IF EXISTS "lakes";
CREATE TEMP TABLE "lakes" AS
SELECT t."pop_est", t."continent", t."name", t."iso_a3", t."gdp_md_est", l.part AS "geom", CAST(l.n AS BIGINT) AS "n" FROM "countries" AS t LEFT JOIN LATERAL (SELECT r.geom AS part, row_number() OVER (ORDER BY d.path, r.path) AS n FROM ST_Dump(CASE WHEN ST_IsEmpty(t."geom") THEN NULL ELSE t."geom" END) AS d, ST_DumpRings(d.geom) AS r WHERE ST_GeometryType(d.geom) = 'ST_Polygon' AND r.path[1] > 0) AS l ON true;

