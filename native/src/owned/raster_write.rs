//! The kernel of `RasterWrite`: the raster step's raster written (clip, NDVI, reproject, merge)
//! and its one row: `output_path`, `raster`, the step's figures, the raster's bounds.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;
use gdal::vector::Geometry;
use geomill_planner::plan::ops::raster::{RasterTask, RasterWriteOp};
use geomill_planner::plan::owned::OwnedOperator;
use geomill_planner::schema::GEOM;

use crate::NativeError;
use crate::layer::{Layer, Wkb};
use crate::raster::clip::{ClipOptions, clip};
use crate::raster::merge::merge;
use crate::raster::ndvi::ndvi;
use crate::raster::reproject::reproject;
use crate::raster::{RasterError, open, to_raster_crs};

pub fn run(op: &RasterWriteOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let input = super::first(op, inputs)?;
    let target = Path::new(op.target.file().map_err(NativeError::Input)?);
    let failed = |e: RasterError| NativeError::Input(format!("raster {}: {e}", op.target.name));
    let mut extra: Vec<ArrayRef> = Vec::new();
    let bounds = match &op.task {
        RasterTask::Clip {
            raster,
            all_touched,
            crop,
            nodata,
        } => {
            let source = Path::new(raster.file().map_err(NativeError::Input)?);
            let shapes = shapes_in_raster_crs(input, source).map_err(failed)?;
            let options = ClipOptions {
                all_touched: *all_touched,
                crop: *crop,
                nodata: *nodata,
            };
            clip(source, &shapes, options, target).map_err(failed)?
        }
        RasterTask::Ndvi {
            raster,
            red_band,
            nir_band,
        } => {
            let source = Path::new(raster.file().map_err(NativeError::Input)?);
            let summary = ndvi(source, *red_band, *nir_band, target).map_err(failed)?;
            for value in [summary.min, summary.max, summary.mean] {
                extra.push(Arc::new(Float64Array::from(vec![value.or(Some(f64::NAN))])));
            }
            summary.bounds
        }
        RasterTask::Reproject {
            raster,
            target_crs,
            resampling,
        } => {
            let source = Path::new(raster.file().map_err(NativeError::Input)?);
            extra.push(Arc::new(StringArray::from(vec![target_crs.as_str()])));
            reproject(source, target_crs, *resampling, target).map_err(failed)?
        }
        RasterTask::Merge {
            rasters,
            method,
            nodata,
        } => {
            let files: Vec<&Path> = rasters
                .iter()
                .map(|r| r.file().map(Path::new))
                .collect::<Result<_, _>>()
                .map_err(NativeError::Input)?;
            extra.push(Arc::new(Int64Array::from(vec![
                i64::try_from(files.len()).unwrap_or(i64::MAX),
            ])));
            merge(&files, *method, *nodata, target).map_err(failed)?
        }
    };
    let name = op.target.name.as_str();
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![name])),
        Arc::new(StringArray::from(vec![name])),
    ];
    columns.extend(extra);
    columns.push(Arc::new(BinaryArray::from(vec![box_wkb(bounds).as_slice()])));
    let fields: Vec<Field> = op
        .columns()
        .into_iter()
        .zip(&columns)
        .map(|((name, _), column)| Field::new(name, column.data_type().clone(), name == GEOM))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    let crs = op
        .output_schema(&[])
        .and_then(|s| s.crs);
    Layer::new(schema, vec![batch], GEOM, crs)
}

/// The input's geometries (NULL and empty ones left out) in the raster's CRS: reprojected when
/// the layer's CRS is known and is not the raster's (GISPulse compares EPSG codes).
fn shapes_in_raster_crs(layer: &Layer, raster: &Path) -> Result<Vec<Geometry>, RasterError> {
    let mut shapes = Vec::new();
    let geom = layer
        .geometry_index()
        .map_err(|e| RasterError::Input(e.to_string()))?;
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom).map_err(|e| RasterError::Input(e.to_string()))?;
        for i in 0..wkbs.len() {
            if let Some(wkb) = wkbs.get(i) {
                let shape =
                    Geometry::from_wkb(wkb).map_err(|e| RasterError::Input(e.to_string()))?;
                if !shape.is_empty() {
                    shapes.push(shape);
                }
            }
        }
    }
    let Some(transform) = to_raster_crs(layer.crs.as_deref(), &open(raster)?)? else {
        return Ok(shapes);
    };
    shapes
        .iter()
        .map(|shape| shape.transform(&transform).map_err(RasterError::from))
        .collect()
}

/// A little-endian WKB polygon of `bounds` (min x, min y, max x, max y).
fn box_wkb([x1, y1, x2, y2]: [f64; 4]) -> Vec<u8> {
    let mut wkb = vec![1, 3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0];
    for (x, y) in [(x1, y1), (x2, y1), (x2, y2), (x1, y2), (x1, y1)] {
        wkb.extend_from_slice(&x.to_le_bytes());
        wkb.extend_from_slice(&y.to_le_bytes());
    }
    wkb
}
