-- 1: ring, box, named
DROP TABLE IF EXISTS "named";
CREATE TEMP TABLE "named" AS
WITH "ring__1" AS MATERIALIZED (SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", CASE WHEN ST_IsValid("geom") THEN "geom" ELSE ST_CollectionExtract(ST_MakeValid("geom"), ST_Dimension("geom") + 1) END AS "geom" FROM "boroughs" AS t),
"box__bbox" AS (SELECT * FROM "ring__1" AS t WHERE ST_Intersects("geom", ST_MakeEnvelope(989000, 189000, 1001000, 201000, ST_SRID("geom")))),
"ring" AS MATERIALIZED (SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", ST_Buffer("geom", 1000, 8) AS "geom" FROM "box__bbox" AS t),
"box" AS (SELECT * FROM "ring" AS t WHERE ST_Intersects("geom", ST_MakeEnvelope(990000, 190000, 1000000, 200000, ST_SRID("geom"))))
SELECT "BoroCode", "BoroName", "Shape_Leng", "Shape_Area", "geom", upper("BoroName") AS "label" FROM "box" AS t;

