-- 1: dense
-- runs natively: per-feature geometry, rows in parallel: geom = each segment cut into equal pieces of at most 499.999
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "dense";
CREATE TEMP TABLE "dense" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Segmentize(ST_Force2D("geom"), 499.999) AS "geom" FROM "boroughs" AS t;

