-- 1: kmeans, dense
-- runs natively: k-means of the points, k=4, k-means++ seed 11: the field's values over every row, then each row's value; then DBSCAN of the points, eps=500000 m, min_samples=4: the field's values over every row, then each row's value
-- (the SQL below runs instead if a kernel declines the data)
CREATE OR REPLACE TEMP TABLE "dense" AS
WITH "kmeans" AS (SELECT t.* FROM "cities" AS t, (SELECT error('geomill: k-means of the points, k=4, k-means++ seed 11 runs on the native backend: it needs the whole layer''s values')) AS native_only(e) WHERE native_only.e IS NULL)
SELECT t.* FROM "kmeans" AS t, (SELECT error('geomill: DBSCAN of the points, eps=500000 m, min_samples=4 runs on the native backend: it needs the whole layer''s values')) AS native_only(e) WHERE native_only.e IS NULL;

-- 2: clustered
CREATE OR REPLACE TEMP TABLE "clustered" AS
SELECT * FROM "dense" AS t WHERE "cluster" >= 0;

