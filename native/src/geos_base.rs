//! The GEOS base layer of the native kernels: WKB to and from GEOS geometries, lines, rings,
//! points and polygons made from coordinates, and the parallel per-feature map over a layer's
//! geometry column. Every geometry module builds on it; it imports none of them.

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, RecordBatch};
use geos::{CoordSeq, Geom, Geometry};
use rayon::prelude::*;

use super::NativeError;
use super::layer::{Layer, Wkb};

/// A coordinate: x, y.
pub(super) type Xy = [f64; 2];

pub(super) fn text(e: geos::Error) -> String {
    e.to_string()
}

/// The x, y of a coordinate sequence.
pub(super) fn xy_of<G: Geom>(line: &G) -> Result<Vec<Xy>, String> {
    let flat = line
        .get_coord_seq()
        .and_then(|seq| seq.as_buffer(Some(2)))
        .map_err(text)?;
    Ok(flat.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
}

pub(super) fn sequence(points: &[Xy]) -> Result<CoordSeq, String> {
    let flat: Vec<f64> = points.iter().flatten().copied().collect();
    CoordSeq::new_from_buffer(&flat, points.len(), false, false).map_err(text)
}

pub(super) fn line_string(points: &[Xy]) -> Result<Geometry, String> {
    if points.is_empty() {
        return Geometry::create_empty_line_string().map_err(text);
    }
    Geometry::create_line_string(sequence(points)?).map_err(text)
}

pub(super) fn ring(points: &[Xy]) -> Result<Geometry, String> {
    Geometry::create_linear_ring(sequence(points)?).map_err(text)
}

pub(super) fn point([x, y]: Xy) -> Result<Geometry, String> {
    Geometry::create_point(sequence(&[[x, y]])?).map_err(text)
}

/// A polygon without holes from its closed shell.
pub(super) fn polygon(shell: &[Xy]) -> Result<Geometry, String> {
    Geometry::create_polygon(ring(shell)?, Vec::new()).map_err(text)
}

/// Replaces each geometry with `f(wkb)` (NULL stays NULL), every other column shared as is.
pub(crate) fn map_geometry<F>(layer: &Layer, f: F) -> Result<Layer, NativeError>
where
    F: Fn(&[u8], usize) -> Result<Option<Vec<u8>>, NativeError> + Sync,
{
    let (geom, schema) = layer.with_binary_geometry()?;
    let batches = layer
        .batches
        .par_iter()
        .map(|batch| {
            let wkbs = Wkb::of(batch, geom)?;
            let out: Vec<Option<Vec<u8>>> = (0..wkbs.len())
                .into_par_iter()
                .map(|i| {
                    wkbs.get(i)
                        .map(|bytes| f(bytes, i))
                        .transpose()
                        .map(Option::flatten)
                })
                .collect::<Result<_, _>>()?;
            let array: BinaryArray = out.iter().map(Option::as_deref).collect();
            let mut columns = batch.columns().to_vec();
            columns[geom] = Arc::new(array) as ArrayRef;
            RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, &layer.geometry, layer.crs.clone())
}

pub(crate) fn to_geos(bytes: &[u8], row: usize) -> Result<Geometry, NativeError> {
    Geometry::new_from_wkb(bytes).map_err(|e| NativeError::Geometry {
        row,
        reason: e.to_string(),
    })
}

pub(crate) fn to_wkb(geometry: &Geometry) -> Result<Vec<u8>, NativeError> {
    geometry
        .to_wkb()
        .map(|bytes| bytes.as_ref().to_vec())
        .map_err(NativeError::geos)
}
