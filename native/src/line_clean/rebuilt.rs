//! The layer's geometries made one GEOS result, as GISPulse's line cleaning makes it: merged
//! at degree-2 nodes (LineMerger) or noded (UnaryUnion), its parts a new table of `id` and
//! geometry in GEOS's order.

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use geos::{Geom, Geometry, GeometryTypes};

use super::super::NativeError;
use super::super::geos_base::{to_geos, to_wkb};
use super::super::layer::Layer;
use super::LineNetwork;
use geomill_planner::plan::ops::line_clean::REBUILT_ID;
use geomill_planner::schema::GEOM;

/// Every non-empty geometry (lines; a MultiLineString's parts each) collected in row order,
/// then merged or unioned; each LineString of the result a row, another result one row.
pub fn rebuilt(layer: &Layer, network: &LineNetwork, merge: bool) -> Result<Layer, NativeError> {
    let mut shapes = Vec::new();
    for (row, bytes) in network.wkb.iter().enumerate() {
        let Some(bytes) = bytes else { continue };
        let g = to_geos(bytes, row)?;
        if g.is_empty().map_err(NativeError::geos)? {
            continue;
        }
        if merge {
            match g.geometry_type() {
                GeometryTypes::LineString => shapes.push(g),
                GeometryTypes::MultiLineString => {
                    for n in 0..g.get_num_geometries().map_err(NativeError::geos)? {
                        shapes.push(Geom::clone(
                            &g.get_geometry_n(n).map_err(NativeError::geos)?,
                        ));
                    }
                }
                _ => {
                    return Err(NativeError::Input(format!(
                        "row {row} is a {:?}: merging lines takes LineStrings and MultiLineStrings only",
                        g.geometry_type()
                    )));
                }
            }
        } else {
            shapes.push(g);
        }
    }
    let mut parts = Vec::new();
    if !shapes.is_empty() {
        let result = if merge {
            Geometry::create_multiline_string(shapes)
                .and_then(|all| all.line_merge())
                .map_err(NativeError::geos)?
        } else {
            Geometry::create_geometry_collection(shapes)
                .and_then(|all| all.unary_union())
                .map_err(NativeError::geos)?
        };
        let pieces = match result.geometry_type() {
            GeometryTypes::MultiLineString => true,
            GeometryTypes::GeometryCollection => merge,
            _ => false,
        };
        if pieces {
            for n in 0..result.get_num_geometries().map_err(NativeError::geos)? {
                parts.push(to_wkb(&Geom::clone(
                    &result.get_geometry_n(n).map_err(NativeError::geos)?,
                ))?);
            }
        } else if !result.is_empty().map_err(NativeError::geos)? {
            parts.push(to_wkb(&result)?);
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new(REBUILT_ID, DataType::Int64, true),
        Field::new(GEOM, DataType::Binary, true),
    ]));
    let ids = Int64Array::from_iter_values(0..parts.len() as i64);
    let geometry: BinaryArray = parts.iter().map(|p| Some(p.as_slice())).collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(ids) as ArrayRef, Arc::new(geometry)],
    )
    .map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, layer.crs.clone())
}
