//! Raster datasets: a GeoTIFF (or COG) kept as uploaded, opened by GDAL's GeoTIFF driver
//! alone, described, and registered in the catalog without being loaded (raster kernels read
//! the file in place, block by block).

use std::path::Path;

use geomill_backends::store::DatasetRecord;
use geomill_native::raster::{RasterInfo, describe, open};
use geomill_planner::schema::{RasterCatalog, RasterSource};

use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// The format label of a raster dataset.
pub const FORMAT: &str = "GTIFF";

/// Whether `path` names a raster file (`.tif`, `.tiff`; the upload check has already made
/// sure its bytes are a TIFF's).
pub fn is_raster_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("tif") || e.eq_ignore_ascii_case("tiff"))
}

/// What the raster file at `path` holds; `None` when it cannot be read any more.
pub fn info(path: &Path) -> Option<RasterInfo> {
    open(path).ok().and_then(|dataset| describe(&dataset).ok())
}

/// Describes the GeoTIFF at `path` and registers it as dataset `id`: 422 `unreadable_file`
/// when GDAL's GeoTIFF driver cannot read it, 422 `raster_without_crs` when it has no CRS.
pub async fn register(
    state: &AppState,
    id: &str,
    name: String,
    path: &Path,
) -> Result<DatasetRecord, AppError> {
    let file = path.to_path_buf();
    let described = blocking(move || Ok(open(&file).and_then(|d| describe(&d)))).await?;
    let info = described
        .map_err(|e| AppError::new(ErrorKind::Invalid, "unreadable_file", e.to_string()))?;
    let Some(crs) = info.crs.clone() else {
        return Err(AppError::new(
            ErrorKind::Invalid,
            "raster_without_crs",
            format!(
                "{name} has no coordinate reference system: a raster is placed on the map and beside vector layers by its CRS (assign one, e.g. gdal_edit.py -a_srs EPSG:4326)"
            ),
        ));
    };
    let (store, key, stored) = (state.store(), id.to_owned(), path.display().to_string());
    blocking(move || store.register_file(&key, &name, FORMAT, Some(&crs), &stored)).await
}

/// The capabilities that read or write rasters: a document naming none needs no raster
/// catalog.
const RASTER_CAPABILITIES: [&str; 6] = [
    "zonal_stats",
    "raster_clip",
    "raster_reproject",
    "raster_merge",
    "ndvi",
    "change_detection",
];

/// The raster datasets a run of `document` may read, by id and by name (the newest of equally
/// named ones), with their files, band counts and CRS, for planning (no folder to write to
/// yet: the run gives it); `None` when the document names no raster step.
pub async fn catalog_for(
    state: &AppState,
    document: &serde_json::Value,
) -> Result<Option<RasterCatalog>, AppError> {
    let text = document.to_string();
    if !RASTER_CAPABILITIES.iter().any(|c| text.contains(c)) {
        return Ok(None);
    }
    let datasets = crate::execute::all_datasets(state).await?;
    let rasters: Vec<(String, String, String)> = datasets
        .into_iter()
        .filter(|d| d.format == FORMAT)
        .map(|d| (d.id, d.name, d.path))
        .collect();
    let described = blocking(move || {
        Ok(rasters
            .into_iter()
            .filter_map(|(id, name, path)| {
                let info = info(Path::new(&path))?;
                let crs = info.crs.filter(|c| c.starts_with("EPSG:"));
                let bands = info.bands.len();
                Some((id, name, RasterSource { path, bands, crs }))
            })
            .collect::<Vec<_>>())
    })
    .await?;
    let mut catalog = RasterCatalog::default();
    for (id, name, source) in described {
        catalog
            .sources
            .entry(name)
            .or_insert_with(|| source.clone());
        catalog.sources.insert(id, source);
    }
    Ok(Some(catalog))
}
