//! Rasters through GDAL: files opened only by the GeoTIFF driver (a COG is a GeoTIFF), their
//! description (size, bands, types, nodata, CRS, transform, overviews), and the raster kernels
//! (`zonal`: zonal statistics as rasterstats computes them; `clip`, `ndvi`, `reproject`, `merge`:
//! rasters written through `write`; `change`: polygons where two rasters differ; `tiles`: PNG map
//! tiles).

pub mod change;
pub mod clip;
pub mod coverage;
pub(crate) mod ffi;
pub mod merge;
pub mod ndvi;
pub mod reproject;
pub mod tiles;
pub mod write;
pub mod zonal;

use std::path::Path;

use gdal::{Dataset, DatasetOptions, GdalOpenFlags};
use serde::Serialize;

/// The only GDAL drivers a raster file is opened with: a file that needs another (a VRT, an
/// HDF5 container, a URL) is refused, not read.
pub const RASTER_DRIVERS: &[&str] = &["GTiff"];

/// Why a raster could not be read or computed.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    /// The file is not a raster GDAL's GeoTIFF driver reads (the message says what it is).
    #[error("not a GeoTIFF raster: {0}")]
    NotARaster(String),
    /// A parameter out of range for this raster (a band it does not have, say).
    #[error("{0}")]
    Input(String),
    /// GDAL failed while reading a raster it opened.
    #[error("reading the raster: {0}")]
    Gdal(#[from] gdal::errors::GdalError),
}

/// GDAL's block cache, in bytes, unless `GDAL_CACHEMAX` says otherwise (GDAL's default, 5 % of
/// the machine's memory, is more than a server's raster reads need: they stream block by block).
const BLOCK_CACHE_BYTES: i64 = 64 << 20;

/// Opens `path` read-only with the GeoTIFF driver alone.
pub fn open(path: &Path) -> Result<Dataset, RasterError> {
    static BOUNDED: std::sync::Once = std::sync::Once::new();
    BOUNDED.call_once(|| {
        if std::env::var_os("GDAL_CACHEMAX").is_none() {
            ffi::bound_block_cache(BLOCK_CACHE_BYTES);
        }
    });
    let options = DatasetOptions {
        open_flags: GdalOpenFlags::GDAL_OF_RASTER | GdalOpenFlags::GDAL_OF_READONLY,
        allowed_drivers: Some(RASTER_DRIVERS),
        ..Default::default()
    };
    let dataset = Dataset::open_ex(path, options).map_err(|e| {
        RasterError::NotARaster(format!(
            "{}: {}",
            path.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            gdal_message(&e)
        ))
    })?;
    if dataset.raster_count() == 0 {
        return Err(RasterError::NotARaster(
            "the file has no raster band".into(),
        ));
    }
    Ok(dataset)
}

/// GDAL's own message of `error`, without the crate's wrapping.
fn gdal_message(error: &gdal::errors::GdalError) -> String {
    match error {
        gdal::errors::GdalError::CplError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

/// What a raster file holds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RasterInfo {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// `EPSG:<code>` when the CRS has one, else its WKT; `None` without a CRS.
    pub crs: Option<String>,
    /// GDAL's geotransform: x of the top-left corner, pixel width, row rotation, y of the
    /// top-left corner, column rotation, pixel height (negative for north-up).
    pub transform: [f64; 6],
    pub bands: Vec<BandInfo>,
}

/// One band of a raster.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BandInfo {
    /// 1-based, as GDAL and rasterio number bands.
    pub index: usize,
    /// GDAL's name of the cell type: Byte, Int16, UInt16, Int32, Float32, Float64, ...
    pub data_type: String,
    pub nodata: Option<f64>,
    /// GDAL's block (tile or strip) size, columns × rows.
    pub block_size: [usize; 2],
    /// How many reduced-resolution overviews the file carries.
    pub overviews: usize,
}

/// Describes an opened raster.
pub fn describe(dataset: &Dataset) -> Result<RasterInfo, RasterError> {
    let (width, height) = dataset.raster_size();
    let transform = dataset.geo_transform()?;
    let crs = dataset.spatial_ref().ok().and_then(|mut srs| {
        let _ = srs.auto_identify_epsg();
        match (srs.auth_name(), srs.auth_code()) {
            (Some(name), Ok(code)) if name == "EPSG" => Some(format!("EPSG:{code}")),
            _ => srs.to_wkt().ok(),
        }
    });
    let bands = (1..=dataset.raster_count())
        .map(|index| {
            let band = dataset.rasterband(index)?;
            let (block_x, block_y) = band.block_size();
            Ok(BandInfo {
                index,
                data_type: band.band_type().name(),
                nodata: band.no_data_value(),
                block_size: [block_x, block_y],
                overviews: usize::try_from(band.overview_count()?).unwrap_or(0),
            })
        })
        .collect::<Result<Vec<_>, RasterError>>()?;
    Ok(RasterInfo {
        width,
        height,
        crs,
        transform,
        bands,
    })
}

/// The transformation from the layer's CRS (`EPSG:<code>`) to the raster's, when they differ
/// (compared by EPSG code, as GISPulse compares them); `None` when the layer's CRS is not
/// known or is the raster's.
pub fn to_raster_crs(
    layer_crs: Option<&str>,
    raster: &Dataset,
) -> Result<Option<gdal::spatial_ref::CoordTransform>, RasterError> {
    use gdal::spatial_ref::{AxisMappingStrategy, CoordTransform, SpatialRef};
    let Some(code) = layer_crs
        .and_then(|c| c.strip_prefix("EPSG:"))
        .and_then(|c| c.parse::<u32>().ok())
    else {
        return Ok(None);
    };
    let mut raster_crs = raster
        .spatial_ref()
        .map_err(|_| RasterError::Input("the raster has no CRS".into()))?;
    let _ = raster_crs.auto_identify_epsg();
    if raster_crs.auth_name().as_deref() == Some("EPSG")
        && raster_crs.auth_code().ok() == i32::try_from(code).ok()
    {
        return Ok(None);
    }
    let mut layer_crs = SpatialRef::from_epsg(code)?;
    layer_crs.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    raster_crs.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    Ok(Some(CoordTransform::new(&layer_crs, &raster_crs)?))
}
