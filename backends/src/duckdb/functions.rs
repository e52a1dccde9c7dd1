//! SQL functions geomill adds to its DuckDB database: `geomill_geodesic_buffer(wkb BLOB,
//! metres DOUBLE, quadrant_segments INTEGER) -> BLOB`, the geodesic buffer the native kernels
//! compute ([`GeodesicBuffer`]), which the planner's DuckDB dialect emits for buffers in metres
//! on longitude/latitude. It replaces two PROJ transformations built per feature (most of the
//! buffer's time) and gives the native answer vertex for vertex. And
//! `geomill_is_valid_reason(wkb BLOB) -> VARCHAR`, GEOS's validity reason
//! (`GEOSisValidReason`, what PostGIS's `ST_IsValidReason` answers; DuckDB spatial has no such
//! function), for `topology_check`. Registered in the database's system catalog, so every
//! connection of it (and the SQL console) can call them.

use std::error::Error;
use std::sync::Arc;

use duckdb::Connection;
use duckdb::arrow::array::{Array, AsArray, BinaryArray, RecordBatch, StringArray};
use duckdb::arrow::datatypes::{DataType, Float64Type, Int32Type};
use duckdb::vscalar::{ArrowFunctionSignature, VArrowScalar};
use rayon::prelude::*;

use geomill_planner::sql::DUCKDB_GEODESIC_BUFFER as GEODESIC_BUFFER;
use geomill_planner::sql::DUCKDB_IS_VALID_REASON as IS_VALID_REASON;

use geomill_geometry::geodesic::GeodesicBuffer;

/// Registers every geomill function on `connection`'s database.
pub(super) fn register(connection: &Connection) -> duckdb::Result<()> {
    connection.register_scalar_function::<GeodesicBufferFunction>(GEODESIC_BUFFER)?;
    connection.register_scalar_function::<IsValidReasonFunction>(IS_VALID_REASON)
}

/// GEOS's validity reason of one WKB geometry; a geometry GEOS cannot read gives GEOS's
/// message, as PostGIS's `ST_IsValidReason` does.
fn is_valid_reason(wkb: &[u8]) -> String {
    use geos::Geom;
    match geos::Geometry::new_from_wkb(wkb) {
        Ok(geometry) => geometry
            .is_valid_reason()
            .unwrap_or_else(|error| error.to_string()),
        Err(error) => error.to_string(),
    }
}

struct IsValidReasonFunction;

impl VArrowScalar for IsValidReasonFunction {
    type State = ();

    fn invoke(_: &(), input: RecordBatch) -> Result<Arc<dyn Array>, Box<dyn Error>> {
        let geometries = input.column(0).as_binary::<i32>();
        let reasons: Vec<Option<String>> = (0..input.num_rows())
            .into_par_iter()
            .map(|row| (!geometries.is_null(row)).then(|| is_valid_reason(geometries.value(row))))
            .collect();
        let array: StringArray = reasons.iter().map(Option::as_deref).collect();
        Ok(Arc::new(array))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(
            vec![DataType::Binary],
            DataType::Utf8,
        )]
    }
}

struct GeodesicBufferFunction;

impl VArrowScalar for GeodesicBufferFunction {
    type State = ();

    fn invoke(_: &(), input: RecordBatch) -> Result<Arc<dyn Array>, Box<dyn Error>> {
        let geometries = input.column(0).as_binary::<i32>();
        let distances = input.column(1).as_primitive::<Float64Type>();
        let segments = input.column(2).as_primitive::<Int32Type>();
        // One buffer definition per distinct (distance, segments): a constant in practice.
        let mut definitions: Vec<GeodesicBuffer> = Vec::new();
        let mut definition_of_row = Vec::with_capacity(input.num_rows());
        for row in 0..input.num_rows() {
            if geometries.is_null(row) || distances.is_null(row) || segments.is_null(row) {
                definition_of_row.push(None);
                continue;
            }
            let (distance, quadrant) = (distances.value(row), segments.value(row));
            if !distance.is_finite() || !(1..=1_000).contains(&quadrant) {
                return Err(format!(
                    "{GEODESIC_BUFFER}: distance {distance} must be finite and quadrant segments \
                     {quadrant} within 1..=1000"
                )
                .into());
            }
            let found = definitions
                .iter()
                .position(|d| d.distance() == distance && d.segments() == quadrant as u32);
            let index = match found {
                Some(index) => index,
                None => {
                    definitions.push(GeodesicBuffer::new(distance, quadrant as u32)?);
                    definitions.len() - 1
                }
            };
            definition_of_row.push(Some(index));
        }
        let buffered: Vec<Option<Vec<u8>>> = definition_of_row
            .par_iter()
            .enumerate()
            .map(|(row, definition)| match definition {
                None => Ok(None),
                Some(index) => definitions[*index]
                    .apply(geometries.value(row))
                    .map_err(|reason| format!("{GEODESIC_BUFFER}: {reason}")),
            })
            .collect::<Result<_, String>>()?;
        let array: BinaryArray = buffered.iter().map(Option::as_deref).collect();
        Ok(Arc::new(array))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(
            vec![DataType::Binary, DataType::Float64, DataType::Int32],
            DataType::Binary,
        )]
    }
}

#[cfg(test)]
mod tests {
    use geos::{Geom, Geometry};

    use crate::duckdb::{EmbeddedEngine, EmbeddedOptions};
    use geomill_geometry::geodesic::GeodesicBuffer;

    const POLYGON: &str = "POLYGON ((10 50, 10.2 50, 10.2 50.1, 10 50.1, 10 50))";

    fn engine() -> EmbeddedEngine {
        EmbeddedEngine::open(&EmbeddedOptions::default()).expect("DuckDB with spatial")
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn duckdb_buffers_give_the_native_bytes() {
        let input = Geometry::new_from_wkt(POLYGON).unwrap().to_wkb().unwrap();
        let expected = GeodesicBuffer::new(1000.0, 8)
            .unwrap()
            .apply(input.as_ref())
            .unwrap()
            .unwrap();
        let same = engine()
            .query_i64(&format!(
                "SELECT (geomill_geodesic_buffer(ST_AsWKB(ST_GeomFromText('{POLYGON}')), 1000, 8) \
                 = from_hex('{}'))::INTEGER",
                hex(&expected)
            ))
            .unwrap();
        assert_eq!(same, 1);
    }

    #[test]
    fn duckdb_gives_the_geos_validity_reason() {
        let engine = engine();
        let reasons = engine
            .query_i64(
                "SELECT count(*) FILTER (WHERE ok) FROM (VALUES \
                 (geomill_is_valid_reason(ST_AsWKB(ST_GeomFromText('POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))'))) = 'Self-intersection[0.5 0.5]'), \
                 (geomill_is_valid_reason(ST_AsWKB(ST_GeomFromText('POLYGON ((0 0, 1 0, 1 1, 0 0))'))) = 'Valid Geometry'), \
                 (geomill_is_valid_reason(ST_AsWKB(ST_GeomFromText('POLYGON EMPTY'))) = 'Valid Geometry'), \
                 (geomill_is_valid_reason(NULL) IS NULL)) AS v(ok)",
            )
            .unwrap();
        assert_eq!(reasons, 4);
    }

    #[test]
    fn nulls_and_empty_geometries_give_null_and_bad_input_names_the_function() {
        let engine = engine();
        let nulls = engine
            .query_i64(
                "SELECT count(*) FILTER (WHERE b IS NULL) FROM (VALUES \
                 (geomill_geodesic_buffer(NULL, 1000, 8)), \
                 (geomill_geodesic_buffer(ST_AsWKB(ST_GeomFromText('POINT EMPTY')), 1000, 8)), \
                 (geomill_geodesic_buffer(ST_AsWKB(ST_GeomFromText('POLYGON EMPTY')), 1000, 8)), \
                 (geomill_geodesic_buffer(ST_AsWKB(ST_Point(1, 2)), -5, 8)), \
                 (geomill_geodesic_buffer(ST_AsWKB(ST_Point(1, 2)), NULL, 8))) AS v(b)",
            )
            .unwrap();
        assert_eq!(nulls, 5);
        for bad in [
            "geomill_geodesic_buffer('\\x01'::BLOB, 1000, 8)",
            "geomill_geodesic_buffer(ST_AsWKB(ST_Point(1, 2)), 1000, 0)",
            "geomill_geodesic_buffer(ST_AsWKB(ST_Point(1, 2)), 'inf'::DOUBLE, 8)",
        ] {
            let error = engine
                .query_i64(&format!("SELECT octet_length({bad})"))
                .unwrap_err();
            // The function's own message (`<name>: <why>`), not DuckDB echoing the query.
            let said = error.to_string();
            assert!(said.contains("geomill_geodesic_buffer: "), "{bad}: {said}");
        }
    }
}
