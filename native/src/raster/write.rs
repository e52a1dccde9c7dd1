//! The rasters the raster steps write: a tiled GeoTIFF staged beside the target and written
//! block by block, then copied by GDAL's COG driver as a Cloud-Optimised GeoTIFF (DEFLATE,
//! 512 × 512 tiles, overviews) and the staging file removed.

use std::path::{Path, PathBuf};

use gdal::raster::{Buffer, GdalDataType, GdalType, RasterCreationOptions};
use gdal::{Dataset, DriverManager};

use super::RasterError;

/// The grid, bands and cell type of a raster to write.
#[derive(Debug, Clone)]
pub struct RasterSpec {
    pub width: usize,
    pub height: usize,
    /// GDAL's geotransform.
    pub transform: [f64; 6],
    /// The CRS as WKT.
    pub projection: String,
    pub bands: usize,
    pub cell_type: GdalDataType,
    pub nodata: Option<f64>,
}

impl RasterSpec {
    /// The bounds (min x, min y, max x, max y) of a north-up grid.
    pub fn bounds(&self) -> [f64; 4] {
        bounds_of(&self.transform, self.width, self.height)
    }
}

/// The bounds (min x, min y, max x, max y) of a north-up grid of `width` × `height` cells.
#[allow(clippy::cast_precision_loss)]
pub fn bounds_of(t: &[f64; 6], width: usize, height: usize) -> [f64; 4] {
    let (x1, y1) = (t[0], t[3]);
    let (x2, y2) = (t[0] + width as f64 * t[1], t[3] + height as f64 * t[5]);
    [x1.min(x2), y1.min(y2), x1.max(x2), y1.max(y2)]
}

/// A raster being written: blocks go to the staging file, [`RasterWriter::finish`] makes the
/// Cloud-Optimised GeoTIFF.
pub struct RasterWriter {
    staging: Option<Dataset>,
    staging_path: PathBuf,
    target: PathBuf,
}

impl RasterWriter {
    /// Starts the raster `target` (refused when a file is already there: a run writes each
    /// raster once).
    pub fn create(target: &Path, spec: &RasterSpec) -> Result<RasterWriter, RasterError> {
        if target.exists() {
            return Err(RasterError::Input(format!(
                "raster {} is written twice by this run: give each raster step its own output",
                target
                    .file_stem()
                    .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
            )));
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| RasterError::Input(format!("creating the raster folder: {e}")))?;
        }
        let staging_path = target.with_extension("staging.tif");
        let options = RasterCreationOptions::from_iter([
            "TILED=YES",
            "BLOCKXSIZE=512",
            "BLOCKYSIZE=512",
            "BIGTIFF=IF_SAFER",
        ]);
        let mut dataset = create_typed(&staging_path, spec, &options)?;
        dataset.set_geo_transform(&spec.transform)?;
        if !spec.projection.is_empty() {
            dataset.set_projection(&spec.projection)?;
        }
        for band in 1..=spec.bands {
            let mut band = dataset.rasterband(band)?;
            band.set_no_data_value(spec.nodata)?;
            if let Some(nodata) = spec.nodata {
                band.fill(nodata, None)?;
            }
        }
        Ok(RasterWriter {
            staging: Some(dataset),
            staging_path,
            target: target.to_path_buf(),
        })
    }

    /// Writes `values` (row-major, `cols` × `rows`) at column `col`, row `row` of `band`.
    pub fn write<T: GdalType + Copy>(
        &mut self,
        band: usize,
        (col, row): (usize, usize),
        (cols, rows): (usize, usize),
        values: Vec<T>,
    ) -> Result<(), RasterError> {
        if cols == 0 || rows == 0 {
            return Ok(());
        }
        let dataset = self
            .staging
            .as_ref()
            .ok_or_else(|| RasterError::Input("the raster is already finished".into()))?;
        let mut buffer = Buffer::new((cols, rows), values);
        #[allow(clippy::cast_possible_wrap)]
        dataset
            .rasterband(band)?
            .write((col as isize, row as isize), (cols, rows), &mut buffer)?;
        Ok(())
    }

    /// The staged raster, for GDAL to write into (a warp).
    pub fn staging(&self) -> Result<&Dataset, RasterError> {
        self.staging
            .as_ref()
            .ok_or_else(|| RasterError::Input("the raster is already finished".into()))
    }

    /// Copies the staged raster as a Cloud-Optimised GeoTIFF to the target.
    pub fn finish(mut self) -> Result<(), RasterError> {
        let staging = self
            .staging
            .take()
            .ok_or_else(|| RasterError::Input("the raster is already finished".into()))?;
        let cog = DriverManager::get_driver_by_name("COG")?;
        let options = RasterCreationOptions::from_iter([
            "COMPRESS=DEFLATE",
            "BLOCKSIZE=512",
            "OVERVIEWS=AUTO",
            "RESAMPLING=NEAREST",
            "BIGTIFF=IF_SAFER",
        ]);
        let written = staging.create_copy(&cog, &self.target, &options)?;
        drop(written);
        drop(staging);
        let _ = std::fs::remove_file(&self.staging_path);
        Ok(())
    }
}

impl Drop for RasterWriter {
    /// A raster not finished (its step failed) leaves no file behind.
    fn drop(&mut self) {
        if self.staging.take().is_some() {
            let _ = std::fs::remove_file(&self.staging_path);
        }
    }
}

/// Creates the staging GeoTIFF with the spec's cell type (types GDAL 3.6 has no Rust type for
/// are written as Float64).
fn create_typed(
    path: &Path,
    spec: &RasterSpec,
    options: &RasterCreationOptions,
) -> Result<Dataset, RasterError> {
    let driver = DriverManager::get_driver_by_name("GTiff")?;
    let (w, h, n) = (spec.width, spec.height, spec.bands);
    let dataset = match spec.cell_type {
        GdalDataType::UInt8 => {
            driver.create_with_band_type_with_options::<u8, _>(path, w, h, n, options)
        }
        GdalDataType::UInt16 => {
            driver.create_with_band_type_with_options::<u16, _>(path, w, h, n, options)
        }
        GdalDataType::Int16 => {
            driver.create_with_band_type_with_options::<i16, _>(path, w, h, n, options)
        }
        GdalDataType::UInt32 => {
            driver.create_with_band_type_with_options::<u32, _>(path, w, h, n, options)
        }
        GdalDataType::Int32 => {
            driver.create_with_band_type_with_options::<i32, _>(path, w, h, n, options)
        }
        GdalDataType::Float32 => {
            driver.create_with_band_type_with_options::<f32, _>(path, w, h, n, options)
        }
        _ => driver.create_with_band_type_with_options::<f64, _>(path, w, h, n, options),
    }?;
    Ok(dataset)
}

/// The cells of a north-up grid window (`transform` of its top-left cell, `cols` × `rows`)
/// GDAL burns for `geometries` (row-major): their centre inside, or every cell touched — the
/// rasterize call rasterio and rasterstats make.
pub fn burn(
    geometries: &[gdal::vector::Geometry],
    transform: [f64; 6],
    (cols, rows): (usize, usize),
    all_touched: bool,
) -> Result<Vec<bool>, RasterError> {
    if rows == 0 || cols == 0 {
        return Ok(Vec::new());
    }
    let driver = DriverManager::get_driver_by_name("MEM")?;
    let mut mask = driver.create_with_band_type::<u8, _>("", cols, rows, 1)?;
    mask.set_geo_transform(&transform)?;
    let options = gdal::raster::RasterizeOptions {
        all_touched,
        ..Default::default()
    };
    let burn_values = vec![1.0; geometries.len()];
    gdal::raster::rasterize(&mut mask, &[1], geometries, &burn_values, Some(options))?;
    let size = (cols, rows);
    let burned = mask
        .rasterband(1)?
        .read_as::<u8>((0, 0), size, size, None)?;
    Ok(burned.data().iter().map(|&b| b != 0).collect())
}
