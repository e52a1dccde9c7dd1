//! Clip and erase: each feature of the first input cut by the union of the second (its mask),
//! the mask decoded and prepared once per batch, batches in parallel. Rows follow the SQL:
//! clip keeps the features that meet the mask, erase drops the ones left empty, and NULL
//! geometries are dropped by both.

use arrow::array::{ArrayRef, BinaryArray, RecordBatch, UInt32Array};
use arrow::compute::take;
use geomill_planner::plan::operator::OverlayMode;
use geos::{Geom, Geometry};
use rayon::prelude::*;
use std::sync::Arc;

use super::NativeError;
use super::dissolve::dissolve;
use super::geos_base::{to_geos, to_wkb};
use super::layer::{Layer, Wkb};

/// The union of every geometry of `layer` as WKB (`None` when it has none).
fn mask_of(layer: &Layer) -> Result<Option<Vec<u8>>, NativeError> {
    let union = dissolve(layer)?;
    let geom = union.geometry_index()?;
    let Some(batch) = union.batches.first() else {
        return Ok(None);
    };
    Ok(Wkb::of(batch, geom)?.get(0).map(<[u8]>::to_vec))
}

/// One feature cut by the mask: `None` drops the row.
fn cut(
    mode: OverlayMode,
    feature: &Geometry,
    mask: &Geometry,
    prepared: &geos::PreparedGeometry<'_>,
) -> Result<Option<Geometry>, NativeError> {
    let meets = prepared.intersects(feature).map_err(NativeError::geos)?;
    let out = match (mode, meets) {
        (OverlayMode::Clip, false) => return Ok(None),
        (OverlayMode::Clip, true) => feature.intersection(mask).map_err(NativeError::geos)?,
        (_, true) => feature.difference(mask).map_err(NativeError::geos)?,
        (_, false) => Clone::clone(feature),
    };
    let empty = out.is_empty().map_err(NativeError::geos)?;
    Ok((mode == OverlayMode::Clip || !empty).then_some(out))
}

/// `features` clipped to, or erased by, the union of `mask_layer` (clip and erase only).
pub fn overlay(
    features: &Layer,
    mask_layer: &Layer,
    mode: OverlayMode,
) -> Result<Layer, NativeError> {
    if !matches!(mode, OverlayMode::Clip | OverlayMode::Erase) {
        return Err(NativeError::Declined(format!("overlay {mode:?}")));
    }
    let mask = mask_of(mask_layer)?;
    let (geom, schema) = features.with_binary_geometry()?;
    let batches = features
        .batches
        .par_iter()
        .map(|batch| {
            let wkbs = Wkb::of(batch, geom)?;
            let mask = match &mask {
                Some(bytes) => Some(to_geos(bytes, 0)?),
                None => None,
            };
            let prepared = match &mask {
                Some(m) => Some(m.to_prepared_geom().map_err(NativeError::geos)?),
                None => None,
            };
            let mut kept: Vec<u32> = Vec::new();
            let mut shapes: Vec<Vec<u8>> = Vec::new();
            for i in 0..wkbs.len() {
                let Some(bytes) = wkbs.get(i) else { continue };
                let feature = to_geos(bytes, i)?;
                let out = match (&mask, &prepared) {
                    (Some(mask), Some(prepared)) => cut(mode, &feature, mask, prepared)?,
                    // Nothing to cut with: clip keeps nothing, erase keeps every feature.
                    _ if mode == OverlayMode::Clip => None,
                    _ => (!feature.is_empty().map_err(NativeError::geos)?).then_some(feature),
                };
                if let Some(out) = out {
                    kept.push(i as u32);
                    shapes.push(to_wkb(&out)?);
                }
            }
            let rows = UInt32Array::from(kept);
            let mut columns: Vec<ArrayRef> = batch
                .columns()
                .iter()
                .map(|c| take(c, &rows, None).map_err(NativeError::arrow))
                .collect::<Result<_, _>>()?;
            columns[geom] = Arc::new(
                shapes
                    .iter()
                    .map(|s| Some(s.as_slice()))
                    .collect::<BinaryArray>(),
            );
            RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, &features.geometry, features.crs.clone())
}
