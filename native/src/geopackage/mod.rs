//! GeoPackage files read and written natively (SQLite), without a round trip through another
//! engine. What either side cannot do as GDAL does (a CRS whose definition comes from PROJ's
//! database, Z or M ordinates, column types without an exact counterpart) it declines with
//! [`NativeError::Declined`](crate::NativeError::Declined) before doing anything, and the
//! caller goes through GDAL instead.

mod read;
mod rtree;
mod write;

pub use read::{GeoPackageLayer, read_geopackage};
pub use write::write_geopackage;

use geomill_planner::sql::quote::ident as quoted;

/// The spatial reference rows every GeoPackage holds (the standard's required rows).
const REQUIRED_SRS: [(&str, i32, &str, i32, &str, &str); 3] = [
    (
        "Undefined cartesian SRS",
        -1,
        "NONE",
        -1,
        "undefined",
        "undefined Cartesian coordinate reference system",
    ),
    (
        "Undefined geographic SRS",
        0,
        "NONE",
        0,
        "undefined",
        "undefined geographic coordinate reference system",
    ),
    (
        "WGS 84 geodetic",
        4326,
        "EPSG",
        4326,
        "GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\",SPHEROID[\"WGS 84\",6378137,298.257223563,AUTHORITY[\"EPSG\",\"7030\"]],AUTHORITY[\"EPSG\",\"6326\"]],PRIMEM[\"Greenwich\",0,AUTHORITY[\"EPSG\",\"8901\"]],UNIT[\"degree\",0.0174532925199433,AUTHORITY[\"EPSG\",\"9122\"]],AXIS[\"Latitude\",NORTH],AXIS[\"Longitude\",EAST],AUTHORITY[\"EPSG\",\"4326\"]]",
        "longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid",
    ),
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, BinaryArray, BooleanArray, Float64Array, Int32Array, Int64Array, StringArray,
    };
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    use geo::{LineString, MultiPolygon, Polygon};
    use geomill_geometry::wkb;

    use super::{read_geopackage, write_geopackage};
    use crate::{Layer, NativeError};

    fn square(x: f64, y: f64, side: f64) -> LineString<f64> {
        LineString::from(vec![
            (x, y),
            (x + side, y),
            (x + side, y + side),
            (x, y + side),
            (x, y),
        ])
    }

    /// A point, a multipolygon with a hole, NULL and an empty polygon, with attributes of
    /// every type the reader reads back.
    fn layer(geometries: Vec<Option<Vec<u8>>>) -> Layer {
        let n = geometries.len();
        let schema = Arc::new(Schema::new(vec![
            Field::new("geom", DataType::Binary, true),
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("flag", DataType::Boolean, true),
            Field::new("value", DataType::Float64, true),
            Field::new("small", DataType::Int32, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(
                geometries
                    .iter()
                    .map(Option::as_deref)
                    .collect::<BinaryArray>(),
            ),
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| Some(i as i64 * 1_000_000_007)),
            )),
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| (i != 1).then(|| format!("région \"{i}\" ';"))),
            )),
            Arc::new(BooleanArray::from_iter((0..n).map(|i| Some(i % 2 == 0)))),
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| (i != 2).then_some(i as f64 / 3.0)),
            )),
            Arc::new(Int32Array::from_iter((0..n).map(|i| Some(-(i as i32))))),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        Layer::new(schema, vec![batch], "geom", Some("EPSG:4326".into())).unwrap()
    }

    fn sample() -> Vec<Option<Vec<u8>>> {
        let mut point = Vec::new();
        wkb::write_point(2.5, -1.0, &mut point);
        let mut shape = Vec::new();
        wkb::write_polygonal(
            &MultiPolygon(vec![
                Polygon::new(square(0.0, 0.0, 10.0), vec![square(2.0, 2.0, 1.0)]),
                Polygon::new(square(20.0, -5.0, 1.0), vec![]),
            ]),
            &mut shape,
        );
        let empty = vec![1, 3, 0, 0, 0, 0, 0, 0, 0];
        vec![Some(point), Some(shape), None, Some(empty)]
    }

    #[test]
    fn a_layer_round_trips_with_its_index_and_extent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.gpkg");
        let written = layer(sample());
        write_geopackage(&written, &path, "result", Some("EPSG:4326")).unwrap();
        let read = read_geopackage(&path).unwrap();
        assert_eq!(read.name, "result");
        assert_eq!(read.geometry_type, "GEOMETRY");
        assert_eq!(read.layer.crs.as_deref(), Some("EPSG:4326"));
        assert_eq!(read.layer.schema, written.schema);
        assert_eq!(read.layer.batches, written.batches);
        let connection = rusqlite::Connection::open(&path).unwrap();
        let one = |sql: &str| -> String {
            connection
                .query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| format!("{v:?}"))
                .unwrap()
        };
        assert_eq!(one("PRAGMA application_id"), "Integer(1196444487)");
        // The point and the multipolygon are indexed; NULL and the empty polygon are not.
        assert_eq!(one("SELECT count(*) FROM rtree_result_geom"), "Integer(2)");
        assert_eq!(
            one("SELECT min_x || ' ' || min_y || ' ' || max_x || ' ' || max_y FROM gpkg_contents"),
            "Text(\"0.0 -5.0 21.0 10.0\")"
        );
        // The multipolygon's header: little-endian, an [x, x, y, y] envelope, SRS 4326.
        let blob: Vec<u8> = connection
            .query_row("SELECT geom FROM result WHERE fid = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(&blob[..4], b"GP\x00\x03");
        assert_eq!(&blob[4..8], &4326i32.to_le_bytes());
        let envelope: Vec<f64> = blob[8..40]
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(envelope, [0.0, 21.0, -5.0, 10.0]);
        let empty: Vec<u8> = connection
            .query_row("SELECT geom FROM result WHERE fid = 4", [], |r| r.get(0))
            .unwrap();
        assert_eq!(empty[3], 0b1_0001, "little-endian, no envelope, empty");
    }

    #[test]
    fn the_r_tree_is_packed_in_bulk_and_answers_as_sqlite_s_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.gpkg");
        // 10,000 rows, every seventh NULL: more than two levels of 51-cell nodes.
        let coordinates = |i: i32| {
            (
                f64::from(i % 100) * 1.5 - 70.0,
                f64::from(i / 100) * 0.9 - 40.0,
            )
        };
        let geometries: Vec<Option<Vec<u8>>> = (0..10_000)
            .map(|i| {
                (i % 7 != 3).then(|| {
                    let (x, y) = coordinates(i);
                    let mut point = Vec::new();
                    wkb::write_point(x, y, &mut point);
                    point
                })
            })
            .collect();
        write_geopackage(&layer(geometries), &path, "result", Some("EPSG:4326")).unwrap();
        let connection = rusqlite::Connection::open(&path).unwrap();
        let check = |connection: &rusqlite::Connection| -> String {
            connection
                .query_row("SELECT rtreecheck('rtree_result_geom')", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(check(&connection), "ok");
        let depth: Vec<u8> = connection
            .query_row(
                "SELECT data FROM rtree_result_geom_node WHERE nodeno = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(u16::from_be_bytes([depth[0], depth[1]]), 2);
        // A box query through SQLite's rtree module equals the rows inside the box.
        let (x0, x1, y0, y1) = (-40.25, 10.75, -20.45, 30.55);
        let mut query = connection
            .prepare(
                "SELECT id FROM rtree_result_geom WHERE maxx >= ? AND minx <= ? AND maxy >= ? AND miny <= ? ORDER BY id",
            )
            .unwrap();
        let found: Vec<i64> = query
            .query_map(rusqlite::params![x0, x1, y0, y1], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected: Vec<i64> = (0..10_000)
            .filter(|i| i % 7 != 3)
            .filter(|&i| {
                let (x, y) = coordinates(i);
                (x0..=x1).contains(&x) && (y0..=y1).contains(&y)
            })
            .map(|i| i64::from(i) + 1)
            .collect();
        assert!(expected.len() > 1_000);
        assert_eq!(found, expected);
        // Later edits go through the rtree module on the packed tree.
        connection
            .execute_batch(
                "INSERT INTO rtree_result_geom VALUES (20001, 1, 2, 3, 4);
                 DELETE FROM rtree_result_geom WHERE id <= 500;",
            )
            .unwrap();
        assert_eq!(check(&connection), "ok");
    }

    #[test]
    fn what_gdal_would_write_otherwise_is_declined_before_any_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("never.gpkg");
        let declined = |outcome: Result<(), NativeError>| {
            assert!(
                matches!(outcome, Err(NativeError::Declined(_))),
                "{outcome:?}"
            );
            assert!(!path.exists());
        };
        declined(write_geopackage(
            &layer(sample()),
            &path,
            "r",
            Some("EPSG:3857"),
        ));
        let mut z = vec![1u8];
        z.extend_from_slice(&1001u32.to_le_bytes());
        for v in [1.0f64, 2.0, 3.0] {
            z.extend_from_slice(&v.to_le_bytes());
        }
        declined(write_geopackage(&layer(vec![Some(z)]), &path, "r", None));
        let mut with_fid = layer(sample());
        let mut fields: Vec<Field> = with_fid
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields[1] = fields[1].clone().with_name("FID");
        with_fid.schema = Arc::new(Schema::new(fields));
        declined(write_geopackage(&with_fid, &path, "r", None));
        // A file that is not a GeoPackage is declined by the reader, not an error.
        std::fs::write(&path, b"not sqlite").unwrap();
        assert!(matches!(
            read_geopackage(&path),
            Err(NativeError::Declined(_))
        ));
    }
}
