//! Per-feature kernels that keep one geometry per row or measure it: centroid and convex hull
//! (GEOS), area and length (planar through GEOS, or on the WGS 84 spheroid with geo's Karney
//! algorithms, as DuckDB's `ST_Area_Spheroid` and PostGIS's geography measure them).

use std::sync::Arc;

use arrow::array::{Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use geo::orient::{Direction, Orient};
use geo::{Geodesic, GeodesicArea, Length, MultiPolygon};
use geos::Geom;
use rayon::prelude::*;

use super::geos_base::{map_geometry, to_geos, to_wkb};
use super::layer::{Layer, Wkb};
use super::{NativeError, wkb};

/// The centroid of each geometry (an empty geometry gives the empty point, as in SQL).
pub fn centroid(layer: &Layer) -> Result<Layer, NativeError> {
    map_geometry(layer, |bytes, row| {
        let out = to_geos(bytes, row)?
            .get_centroid()
            .map_err(NativeError::geos)?;
        to_wkb(&out).map(Some)
    })
}

/// The convex hull of each geometry.
pub fn convex_hull(layer: &Layer) -> Result<Layer, NativeError> {
    map_geometry(layer, |bytes, row| {
        let out = to_geos(bytes, row)?
            .convex_hull()
            .map_err(NativeError::geos)?;
        to_wkb(&out).map(Some)
    })
}

/// Which measure of a geometry to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Area,
    /// Length of lines, perimeter of polygons.
    Length,
}

/// One measure of one WKB geometry, times `factor`.
fn measure_one(
    bytes: &[u8],
    row: usize,
    measure: Measure,
    geodesic: bool,
) -> Result<f64, NativeError> {
    if !geodesic {
        // GEOS's length of a polygon is its perimeter, as the SQL measures it.
        let g = to_geos(bytes, row)?;
        return match measure {
            Measure::Area => g.area(),
            Measure::Length => g.length(),
        }
        .map_err(NativeError::geos);
    }
    let declined = |what: &str| {
        NativeError::Declined(format!(
            "geodesic {measure:?} of {what} (native: polygons and multipolygons)"
        ))
    };
    let code = wkb::geometry_type(bytes).map_err(|e| NativeError::Geometry {
        row,
        reason: e.to_string(),
    })?;
    match (code, measure) {
        (3 | 6, _) => {
            let shape: MultiPolygon<f64> =
                wkb::read_polygonal(bytes).map_err(|e| NativeError::Geometry {
                    row,
                    reason: e.to_string(),
                })?;
            Ok(match measure {
                // Karney's area of a ring depends on its winding: exteriors counter-clockwise.
                Measure::Area => shape.orient(Direction::Default).geodesic_area_unsigned(),
                Measure::Length => shape
                    .0
                    .iter()
                    .flat_map(|p| std::iter::once(p.exterior()).chain(p.interiors()))
                    .map(|ring| Geodesic.length(ring))
                    .sum(),
            })
        }
        (1 | 4, _) => Ok(0.0),
        _ => Err(declined("lines or collections")),
    }
}

/// Appends (or replaces) column `output` with each geometry's `measure` × `factor` (NULL for
/// a NULL geometry).
pub fn measure(
    layer: &Layer,
    output: &str,
    measure: Measure,
    geodesic: bool,
    factor: f64,
) -> Result<Layer, NativeError> {
    let geom = layer.geometry_index()?;
    let mut fields: Vec<Arc<Field>> = layer.schema.fields().iter().cloned().collect();
    let replaced = layer.schema.index_of(output).ok();
    let field = Arc::new(Field::new(output, DataType::Float64, true));
    match replaced {
        Some(index) => fields[index] = field,
        None => fields.push(field),
    }
    let schema = Arc::new(Schema::new(fields));
    let batches = layer
        .batches
        .par_iter()
        .map(|batch| {
            let wkbs = Wkb::of(batch, geom)?;
            let values: Vec<Option<f64>> = (0..wkbs.len())
                .into_par_iter()
                .map(|i| {
                    wkbs.get(i)
                        .map(|bytes| measure_one(bytes, i, measure, geodesic).map(|v| v * factor))
                        .transpose()
                })
                .collect::<Result<_, _>>()?;
            let array = Arc::new(Float64Array::from(values));
            let mut columns = batch.columns().to_vec();
            match replaced {
                Some(index) => columns[index] = array,
                None => columns.push(array),
            }
            RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, &layer.geometry, layer.crs.clone())
}
