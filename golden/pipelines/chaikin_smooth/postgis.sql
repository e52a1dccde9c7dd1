-- 1: smooth
-- runs natively: per-feature geometry, rows in parallel: geom = Chaikin corner cutting, 2 iteration(s)
-- (the SQL below runs instead if a kernel declines the data)
DROP TABLE IF EXISTS "smooth";
CREATE TEMP TABLE "smooth" AS
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_Dimension("geom") = 0 OR ST_IsEmpty("geom") THEN ST_Force2D("geom") ELSE ST_ChaikinSmoothing(ST_Force2D("geom"), 2, false) END AS "geom" FROM "boroughs" AS t;

