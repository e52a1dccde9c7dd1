//! Each native kernel against the same query as DuckDB spatial SQL on the embedded engine, on
//! seeded inputs with boundary cases (points on edges and vertices, in holes, NULL and empty
//! geometries): counts and pairs identical, distances within 1e-9 degrees, geometries within
//! a symmetric-difference area of 1e-9 of their area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use arrow::array::{Array, Float64Array, Int64Array};
use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::executor;
use geomill_native::{Layer, aggregate, dissolve, geometry_ops, joins};
use geomill_planner::plan::operator::{AggFunc, AggItem, RefColumns, SpatialPredicate};
use proptest::prelude::*;

fn engine() -> EmbeddedEngine {
    EmbeddedEngine::open(&EmbeddedOptions::default()).unwrap()
}

/// 40 irregular star polygons on a grid, one with a hole, one a multipolygon, one NULL and one
/// empty; points clustered over them plus every vertex, edge midpoints of the hole and square,
/// a point in the hole, NULL and empty points.
fn fixtures(duck: &EmbeddedEngine, seed: u32) {
    duck.execute_batch(&format!(
        "CREATE OR REPLACE TABLE zones AS
         WITH verts AS (
           SELECT i, k,
             (i % 7 + 0.5) + cos(2 * pi() * k / 12) * 0.45 * (0.55 + 0.4 * (hash(i * 12 + k, {seed}) % 1000) / 1000.0) AS x,
             (i // 7 + 0.5) + sin(2 * pi() * k / 12) * 0.45 * (0.55 + 0.4 * (hash(i * 12 + k, {seed}) % 1000) / 1000.0) AS y
           FROM range(40) a(i), range(12) b(k)),
         rings AS (SELECT i, list(ST_Point(x, y) ORDER BY k) AS pts FROM verts GROUP BY i)
         SELECT i AS id, CAST(hash(i, 5) % 1000 AS INTEGER) AS weight,
                ST_MakePolygon(ST_MakeLine(list_append(pts, pts[1]))) AS geom FROM rings
         UNION ALL SELECT 100, 1, ST_GeomFromText('POLYGON((10 0, 12 0, 12 2, 10 2, 10 0), (10.5 0.5, 10.5 1.5, 11.5 1.5, 11.5 0.5, 10.5 0.5))')
         UNION ALL SELECT 101, 2, ST_GeomFromText('MULTIPOLYGON(((10 3, 11 3, 11 4, 10 3)), ((12 3, 13 3, 13 4, 12 4, 12 3)))')
         UNION ALL SELECT 102, 3, NULL
         UNION ALL SELECT 103, 4, ST_GeomFromText('POLYGON EMPTY');
         CREATE OR REPLACE TABLE pts AS
         SELECT i AS id, CAST(hash(i, {seed} + 9) % 100 AS INTEGER) AS value,
                ST_Point(7.5 * (hash(i, {seed} + 1) % 100000) / 100000.0 + 0.1 * ((hash(i, {seed} + 2) % 1000) / 1000.0 - 0.5),
                         6.5 * (hash(i, {seed} + 3) % 100000) / 100000.0) AS geom
         FROM range(3000) t(i)
         UNION ALL
         SELECT 100000 + row_number() OVER (), 7, geom FROM (
           SELECT UNNEST(ST_Dump(ST_Points(geom))).geom AS geom FROM zones WHERE geom IS NOT NULL)
         UNION ALL SELECT 200000, 1, ST_Point(11, 0)
         UNION ALL SELECT 200001, 1, ST_Point(10.5, 1)
         UNION ALL SELECT 200002, 1, ST_Point(11, 1)
         UNION ALL SELECT 200003, 1, ST_Point(12.5, 4)
         UNION ALL SELECT 200004, NULL, ST_Point(10.2, 0.2)
         UNION ALL SELECT 200005, 1, NULL
         UNION ALL SELECT 200006, 1, ST_GeomFromText('POINT EMPTY')
         UNION ALL SELECT 200007, 1, ST_Point(10.5, 3.5)"
    ))
    .unwrap();
}

fn layers(duck: &EmbeddedEngine) -> (Layer, Layer) {
    let crs = Some("EPSG:4326".to_owned());
    (
        executor::table_layer(duck, "zones", "geom", crs.clone()).unwrap(),
        executor::table_layer(duck, "pts", "geom", crs).unwrap(),
    )
}

fn int_column(layer: &Layer, name: &str) -> Vec<Option<i64>> {
    let index = layer.schema.index_of(name).unwrap();
    let mut out = Vec::new();
    for batch in &layer.batches {
        let cast =
            arrow::compute::cast(batch.column(index), &arrow::datatypes::DataType::Int64).unwrap();
        let a = cast.as_any().downcast_ref::<Int64Array>().unwrap();
        out.extend((0..a.len()).map(|i| a.is_valid(i).then(|| a.value(i))));
    }
    out
}

fn float_column(layer: &Layer, name: &str) -> Vec<Option<f64>> {
    let index = layer.schema.index_of(name).unwrap();
    let mut out = Vec::new();
    for batch in &layer.batches {
        let a = batch
            .column(index)
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap();
        out.extend((0..a.len()).map(|i| a.is_valid(i).then(|| a.value(i))));
    }
    out
}

fn sql_rows(duck: &EmbeddedEngine, sql: &str, columns: &[&str]) -> Vec<Vec<Option<i64>>> {
    let layer = executor::query_layer(
        duck,
        &format!("SELECT *, NULL::GEOMETRY AS g FROM ({sql})"),
        "g",
        None,
    )
    .unwrap();
    let cols: Vec<_> = columns.iter().map(|c| int_column(&layer, c)).collect();
    (0..layer.num_rows())
        .map(|r| cols.iter().map(|c| c[r]).collect())
        .collect()
}

fn pip_matches(duck: &EmbeddedEngine, seed: u32, predicate: SpatialPredicate, function: &str) {
    fixtures(duck, seed);
    let (zones, pts) = layers(duck);
    let aggs = vec![
        AggItem {
            output: "count".into(),
            func: AggFunc::Count,
            column: None,
        },
        AggItem {
            output: "value_sum".into(),
            func: AggFunc::Sum,
            column: Some("value".into()),
        },
        AggItem {
            output: "value_max".into(),
            func: AggFunc::Max,
            column: Some("value".into()),
        },
    ];
    let out = aggregate::spatial_aggregate(&zones, &pts, predicate, &aggs).unwrap();
    let native: BTreeMap<i64, Vec<Option<i64>>> = int_column(&out, "id")
        .into_iter()
        .zip(
            int_column(&out, "count")
                .into_iter()
                .zip(int_column(&out, "value_sum"))
                .zip(int_column(&out, "value_max")),
        )
        .map(|(id, ((c, s), m))| (id.unwrap(), vec![c, s, m]))
        .collect();
    let sql = format!(
        "SELECT t.id, (SELECT count(*) FROM pts r WHERE {function}(r.geom, t.geom)) AS c,
                (SELECT sum(r.value) FROM pts r WHERE {function}(r.geom, t.geom)) AS s,
                (SELECT max(r.value) FROM pts r WHERE {function}(r.geom, t.geom)) AS m FROM zones t"
    );
    let expected: BTreeMap<i64, Vec<Option<i64>>> = sql_rows(duck, &sql, &["id", "c", "s", "m"])
        .into_iter()
        .map(|r| (r[0].unwrap(), r[1..].to_vec()))
        .collect();
    assert_eq!(native, expected, "{function}, seed {seed}");
}

#[test]
fn point_in_polygon_count_sum_max_equal_duckdb_with_boundary_points() {
    let duck = engine();
    pip_matches(&duck, 1, SpatialPredicate::Within, "ST_Within");
    pip_matches(&duck, 2, SpatialPredicate::Intersects, "ST_Intersects");
}

#[test]
fn distance_join_and_nearest_equal_duckdb() {
    let duck = engine();
    fixtures(&duck, 3);
    let (zones, pts) = layers(&duck);
    let d = 0.05;
    let joined = joins::points_polygons_join(
        &pts,
        &zones,
        SpatialPredicate::Dwithin,
        Some(d),
        &["id".into()],
    )
    .unwrap();
    let mut native: Vec<(i64, i64)> = int_column(&joined, "id")
        .into_iter()
        .zip(int_column(&joined, "ref_id"))
        .map(|(a, b)| (a.unwrap(), b.unwrap()))
        .collect();
    native.sort();
    let mut expected: Vec<(i64, i64)> = sql_rows(
        &duck,
        &format!(
            "SELECT t.id, r.id AS ref_id FROM pts t JOIN zones r ON ST_DWithin(t.geom, r.geom, {d})"
        ),
        &["id", "ref_id"],
    )
    .into_iter()
    .map(|r| (r[0].unwrap(), r[1].unwrap()))
    .collect();
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(native, expected);

    for max in [None, Some(0.3)] {
        let near = joins::nearest(
            &pts,
            &zones,
            5,
            max,
            "distance",
            &RefColumns::Only(vec!["id".into()]),
        )
        .unwrap();
        let ids = int_column(&near, "id");
        let refs = int_column(&near, "ref_id");
        let dist = float_column(&near, "distance");
        // A NULL or empty point has no distance to anything: one row of NULLs natively, where
        // the lateral SQL would list arbitrary rows (NULL distances; 0 for an empty point). Empty
        // polygons are at no distance natively, at 0 in DuckDB.
        let within = max
            .map(|m| format!(" AND ST_DWithin(t.geom, r.geom, {m})"))
            .unwrap_or_default();
        let sql = format!(
            "SELECT t.id, n.ref_id, CAST(n.distance * 1e9 AS BIGINT) AS nano FROM pts t LEFT JOIN LATERAL (
               SELECT ST_Distance(t.geom, r.geom) AS distance, r.id AS ref_id FROM zones r WHERE ST_Distance(t.geom, r.geom) IS NOT NULL AND NOT ST_IsEmpty(t.geom) AND NOT ST_IsEmpty(r.geom){within}
               ORDER BY distance, r.id LIMIT 5) n ON true ORDER BY t.id, n.distance, n.ref_id"
        );
        let expected = sql_rows(&duck, &sql, &["id", "ref_id", "nano"]);
        let mut got: Vec<(i64, Option<i64>, Option<f64>)> = (0..ids.len())
            .map(|i| (ids[i].unwrap(), refs[i], dist[i]))
            .collect();
        got.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.2.unwrap_or(0.0).total_cmp(&b.2.unwrap_or(0.0)))
                .then(a.1.cmp(&b.1))
        });
        assert_eq!(got.len(), expected.len(), "max {max:?}");
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!((g.0, g.1), (e[0].unwrap(), e[1]), "max {max:?}");
            if let (Some(d), Some(nano)) = (g.2, e[2]) {
                assert!((d * 1e9 - nano as f64).abs() <= 1.0, "{g:?} vs {e:?}");
            }
        }
    }
}

/// The symmetric difference of `native` (stored back into DuckDB) and the SQL result, relative
/// to the SQL result's area, per id; NULL where either side is NULL.
fn relative_difference(duck: &EmbeddedEngine, native: &Layer, sql: &str) -> f64 {
    executor::store_layer(duck, native, "native_out", &std::env::temp_dir()).unwrap();
    duck.execute_batch(&format!("CREATE OR REPLACE TABLE sql_out AS {sql}"))
        .unwrap();
    let rows = sql_rows(
        duck,
        "SELECT CAST(1e12 * coalesce(max(ST_Area(ST_SymDifference(a.geom, b.geom)) / NULLIF(ST_Area(b.geom), 0)), 0) AS BIGINT) AS d,
                count(*) AS n, count(*) FILTER (a.geom IS NULL) AS na, count(*) FILTER (b.geom IS NULL) AS nb,
                count(*) FILTER (ST_IsEmpty(a.geom) <> ST_IsEmpty(b.geom)) AS empties
         FROM native_out a FULL JOIN sql_out b USING (id)",
        &["d", "n", "na", "nb", "empties"],
    );
    assert_eq!(rows[0][2], rows[0][3], "NULL geometries differ");
    assert_eq!(rows[0][4], Some(0), "empty geometries differ");
    rows[0][0].unwrap() as f64 / 1e12
}

#[test]
fn buffer_in_metres_dissolve_and_simplify_match_duckdb() {
    let duck = engine();
    fixtures(&duck, 4);
    duck.execute_batch("DELETE FROM pts WHERE id >= 200005; DELETE FROM pts WHERE id % 10 <> 0")
        .unwrap();
    let (zones, pts) = layers(&duck);
    let buffered = geometry_ops::buffer(&pts, 100.0, true, 8).unwrap();
    let aeqd = "'+proj=aeqd +lat_0=' || ST_Y(geom) || ' +lon_0=' || ST_X(geom) || ' +datum=WGS84 +units=m +no_defs'";
    let buffer_sql = format!(
        "SELECT id, ST_Transform(ST_Buffer(ST_Transform(geom, 'EPSG:4326', {aeqd}, always_xy := true), 100, 8), {aeqd},
           '+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X(geom) || ' +no_defs', always_xy := true) AS geom FROM pts"
    );
    let d = relative_difference(&duck, &buffered, &buffer_sql);
    assert!(d < 1e-6, "buffer differs by {d}");

    let dissolved = dissolve::dissolve(&buffered).unwrap();
    executor::store_layer(&duck, &dissolved, "diss", &std::env::temp_dir()).unwrap();
    let rows = sql_rows(&duck, "SELECT CAST(1e12 * ST_Area(ST_SymDifference(a.geom, b.geom)) / ST_Area(b.geom) AS BIGINT) AS d
        FROM diss a, (SELECT ST_Union_Agg(geom) AS geom FROM native_out) b", &["d"]);
    // The native union puts vertices on a grid of 2^-30 of the layer's extent (here 2^-28 degrees,
    // 0.4 mm): on 100 m circles that is a symmetric difference of a few millionths of their area.
    assert!(
        rows[0][0].unwrap() < 10_000_000,
        "dissolve differs: {rows:?}"
    );

    // The simplifiers of the system GEOS (3.11) and of DuckDB's spatial extension choose
    // different ring anchors (start points kept or dropped): both stay within the tolerance of
    // the input, so within twice the tolerance of each other, with the same NULLs.
    for (preserve, function) in [
        (true, "ST_SimplifyPreserveTopology"),
        (false, "ST_Simplify"),
    ] {
        let simplified = geometry_ops::simplify(&zones, 0.05, preserve).unwrap();
        executor::store_layer(&duck, &simplified, "native_out", &std::env::temp_dir()).unwrap();
        let rows = sql_rows(
            &duck,
            &format!("SELECT count(*) FILTER (NOT ST_Covers(ST_Buffer(a.geom, 0.1), {function}(b.geom, 0.05))
                                      OR NOT ST_Covers(ST_Buffer({function}(b.geom, 0.05), 0.1), a.geom)) AS h,
                    count(*) FILTER ((a.geom IS NULL) <> (b.geom IS NULL)) AS nulls
             FROM native_out a JOIN zones b USING (id) WHERE NOT ST_IsEmpty(b.geom)"),
            &["h", "nulls"],
        );
        assert_eq!(
            rows[0][0],
            Some(0),
            "{function}: Hausdorff distance over 0.1"
        );
        assert_eq!(rows[0][1], Some(0));
    }
}

#[test]
fn geodesic_buffers_of_polygons_match_duckdb_per_feature_projections() {
    // Polygons ~100 km across (holes, a multipolygon, NULL, empty), buffered 1,000 m: natively
    // in the local frame of each centroid, in SQL through PROJ's aeqd at the same centroid.
    let duck = engine();
    fixtures(&duck, 6);
    let (zones, _) = layers(&duck);
    let buffered = geometry_ops::buffer(&zones, 1_000.0, true, 8).unwrap();
    let aeqd = "'+proj=aeqd +lat_0=' || ST_Y(ST_Centroid(geom)) || ' +lon_0=' || ST_X(ST_Centroid(geom)) || ' +datum=WGS84 +units=m +no_defs'";
    let buffer_sql = format!(
        "SELECT id, ST_Transform(ST_Buffer(ST_Transform(geom, 'EPSG:4326', {aeqd}, always_xy := true), 1000, 8), {aeqd},
           '+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X(ST_Centroid(geom)) || ' +no_defs', always_xy := true) AS geom FROM zones"
    );
    let d = relative_difference(&duck, &buffered, &buffer_sql);
    assert!(d < 1e-3, "polygon buffers differ by {d} of their area");
    // The ring a buffer adds is about perimeter x 1,000 m on both sides alike.
    let rows = sql_rows(
        &duck,
        "SELECT CAST(1e6 * max(abs(ST_Area_Spheroid(a.geom) - ST_Area_Spheroid(b.geom))
                      / (ST_Area_Spheroid(b.geom) - ST_Area_Spheroid(z.geom))) AS BIGINT) AS d
         FROM native_out a JOIN sql_out b USING (id) JOIN zones z USING (id)
         WHERE NOT ST_IsEmpty(z.geom)",
        &["d"],
    );
    assert!(
        rows[0][0].unwrap() < 5_000,
        "added areas differ: {rows:?} (parts per million)"
    );
}

#[test]
fn bad_wkb_is_an_error_not_a_panic_and_geoparquet_round_trips() {
    let duck = engine();
    fixtures(&duck, 5);
    let (zones, _) = layers(&duck);
    let bad = executor::query_layer(
        &duck,
        "SELECT 1 AS id, 2 AS value, ST_GeomFromText('LINESTRING(0 0, 1 1)') AS geom",
        "geom",
        None,
    )
    .unwrap();
    let count = [AggItem {
        output: "n".into(),
        func: AggFunc::Count,
        column: None,
    }];
    let error =
        aggregate::spatial_aggregate(&zones, &bad, SpatialPredicate::Within, &count).unwrap_err();
    assert!(error.to_string().contains("point"), "{error}");
    let error =
        aggregate::spatial_aggregate(&bad, &zones, SpatialPredicate::Within, &count).unwrap_err();
    assert!(error.to_string().contains("polygon"), "{error}");
    assert!(joins::nearest(&bad, &zones, 0, None, "d", &RefColumns::All).is_err());

    let file = tempfile::tempdir().unwrap();
    let path = file.path().join("zones.parquet");
    geomill_native::write_geoparquet(&zones, &path).unwrap();
    let back = geomill_native::read_geoparquet(&path, Some(&["id"])).unwrap();
    assert_eq!(back.num_rows(), zones.num_rows());
    assert_eq!(back.crs.as_deref(), Some("EPSG:4326"));
    assert_eq!(int_column(&back, "id"), int_column(&zones, "id"));
    assert!(back.schema.index_of("weight").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn point_in_polygon_equals_duckdb_on_generated_inputs(seed in 10u32..100_000) {
        let duck = engine();
        pip_matches(&duck, seed, SpatialPredicate::Within, "ST_Within");
    }
}
