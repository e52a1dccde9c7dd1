//! The kernel of `ZonalStats`: each row's geometry as a zone over the raster the server
//! resolved, its statistics added as columns (counts as integers, the rest as doubles).

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array};
use arrow::datatypes::DataType;
use geomill_planner::plan::ops::zonal_stats::ZonalStatsOp;

use crate::NativeError;
use crate::classify::with_columns;
use crate::layer::{Layer, Wkb};
use crate::raster::zonal::{ZonalOptions, zonal_stats};
use crate::raster::{RasterError, open, to_raster_crs};

/// The zones reprojected to the raster's CRS (`None`: already in it, or the layer's is not
/// known).
fn in_raster_crs(
    layer: &Layer,
    raster: &Path,
    zones: &[Option<&[u8]>],
) -> Result<Option<Vec<Option<Vec<u8>>>>, RasterError> {
    let Some(transform) = to_raster_crs(layer.crs.as_deref(), &open(raster)?)? else {
        return Ok(None);
    };
    zones
        .iter()
        .map(|zone| {
            zone.map(|wkb| {
                let geometry = gdal::vector::Geometry::from_wkb(wkb)?;
                if geometry.is_empty() {
                    return Ok(wkb.to_vec());
                }
                geometry.transform(&transform)?.wkb()
            })
            .transpose()
            .map_err(RasterError::from)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

pub fn run(op: &ZonalStatsOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let layer = super::first(op, inputs)?;
    let path = op.raster.file().map_err(NativeError::Input)?;
    let geom = layer.geometry_index()?;
    let mut zones: Vec<Option<&[u8]>> = Vec::new();
    let mut rows_per_batch = Vec::with_capacity(layer.batches.len());
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        rows_per_batch.push(wkbs.len());
        zones.extend((0..wkbs.len()).map(|i| wkbs.get(i)));
    }
    let reprojected = if op.reproject {
        in_raster_crs(layer, Path::new(path), &zones)
            .map_err(|e| NativeError::Input(format!("zonal statistics of {}: {e}", op.raster.name)))?
    } else {
        None
    };
    if let Some(reprojected) = &reprojected {
        zones = reprojected.iter().map(Option::as_deref).collect();
    }
    let options = ZonalOptions {
        band: op.band,
        stats: op.stats.clone(),
        all_touched: op.all_touched,
        nodata: op.nodata,
        coverage: op.coverage_weighted,
    };
    let values = zonal_stats(Path::new(path), &zones, &options)
        .map_err(|e| NativeError::Input(format!("zonal statistics of {}: {e}", op.raster.name)))?;
    let outputs: Vec<(String, DataType)> = op
        .outputs()
        .into_iter()
        .zip(&op.stats)
        .map(|((name, _), stat)| {
            let ty = if op.is_integer(*stat) {
                DataType::Int64
            } else {
                DataType::Float64
            };
            (name, ty)
        })
        .collect();
    let mut columns: Vec<Vec<ArrayRef>> = Vec::with_capacity(rows_per_batch.len());
    let mut start = 0;
    for rows in rows_per_batch {
        let part = &values[start..start + rows];
        start += rows;
        let arrays = op
            .stats
            .iter()
            .enumerate()
            .map(|(s, stat)| -> ArrayRef {
                let cells = part.iter().map(|row| row[s]);
                if op.is_integer(*stat) {
                    #[allow(clippy::cast_possible_truncation)]
                    let counts: Int64Array = cells.map(|v| v.map(|v| v as i64)).collect();
                    Arc::new(counts)
                } else {
                    Arc::new(cells.collect::<Float64Array>())
                }
            })
            .collect();
        columns.push(arrays);
    }
    with_columns(layer, &outputs, |batch| columns[batch].clone())
}
