//! A raster warped to another CRS, as rasterio's `calculate_default_transform` and `reproject`
//! do: the grid GDAL suggests for the source's extent in the target CRS, every band warped by
//! GDAL's warper with the chosen resampling, cells no source cell reaches set to nodata (the
//! source's, else 0), the source's cell type kept.

use std::path::Path;

use gdal::spatial_ref::SpatialRef;
use geomill_planner::plan::ops::raster::Resampling;

use super::ffi::{suggested_grid, warp_into};
use super::write::{RasterSpec, RasterWriter};
use super::{RasterError, open};

/// Warps `source` to `target_crs` (`EPSG:<code>`) into `target`; answers its bounds.
pub fn reproject(
    source: &Path,
    target_crs: &str,
    resampling: Resampling,
    target: &Path,
) -> Result<[f64; 4], RasterError> {
    let dataset = open(source)?;
    if dataset.spatial_ref().is_err() {
        return Err(RasterError::Input(
            "the raster has no CRS to warp from".into(),
        ));
    }
    let code = target_crs
        .strip_prefix("EPSG:")
        .and_then(|c| c.parse::<u32>().ok())
        .ok_or_else(|| RasterError::Input(format!("{target_crs:?} is not an EPSG code")))?;
    let wkt = SpatialRef::from_epsg(code)
        .and_then(|srs| srs.to_wkt())
        .map_err(|e| RasterError::Input(format!("{target_crs}: {e}")))?;
    let (transform, width, height) = suggested_grid(&dataset, &wkt)?;
    let first = dataset.rasterband(1)?;
    let nodata = first.no_data_value();
    let spec = RasterSpec {
        width,
        height,
        transform,
        projection: wkt,
        bands: dataset.raster_count(),
        cell_type: first.band_type(),
        nodata,
    };
    let writer = RasterWriter::create(target, &spec)?;
    // rasterio's warp options: an approximate transformer to 0.125 cell, one thread, one
    // nodata test for every band, the raster first filled with nodata (else 0).
    let arguments: Vec<String> = [
        "-r",
        gdal_name(resampling),
        "-et",
        "0.125",
        "-wo",
        "NUM_THREADS=1",
        "-wo",
        "UNIFIED_SRC_NODATA=YES",
        "-wo",
        if nodata.is_some() {
            "INIT_DEST=NO_DATA"
        } else {
            "INIT_DEST=0"
        },
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    warp_into(&dataset, writer.staging()?, &arguments)?;
    writer.finish()?;
    Ok(spec.bounds())
}

/// gdalwarp's name of a resampling.
fn gdal_name(resampling: Resampling) -> &'static str {
    match resampling {
        Resampling::Nearest => "near",
        Resampling::Bilinear => "bilinear",
        Resampling::Cubic => "cubic",
        Resampling::Lanczos => "lanczos",
        Resampling::Average => "average",
        Resampling::Mode => "mode",
    }
}
