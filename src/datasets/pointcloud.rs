//! Point-cloud datasets: a LAS/LAZ file kept as uploaded and read, chunk by chunk, into a
//! GeoParquet point layer beside it (every dimension a column, `geom` a 3D point), which is
//! loaded as the dataset's one layer, named after the file; the format is `LAS` or `LAZ`.

use std::path::Path;

use geomill_native::pointcloud::{CloudError, to_geoparquet};

use crate::blocking::blocking;
use crate::datasets::model::Dataset;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// Whether `path` names a point cloud (`.las`, `.laz`; the upload check has already made sure
/// its bytes start as a LAS file's).
pub fn is_pointcloud_path(path: &Path) -> bool {
    format_of(path).is_some()
}

/// `LAS` or `LAZ` by the file's extension.
pub fn format_of(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    match extension.as_str() {
        "las" => Some("LAS"),
        "laz" => Some("LAZ"),
        _ => None,
    }
}

/// Reads the point cloud at `path` into a point layer and stores it as dataset `id`: 422
/// `unreadable_file` naming what is wrong with a file the reader refuses (truncated, a point
/// count its records do not match, an unknown point format), nothing stored.
pub async fn ingest(
    state: &AppState,
    id: &str,
    name: String,
    path: &Path,
) -> Result<Dataset, AppError> {
    let format = format_of(path).unwrap_or("LAS");
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("points")
        .to_owned();
    let layer_path = path.with_file_name(format!("{stem}.parquet"));
    let (source, target) = (path.to_path_buf(), layer_path.clone());
    let read = blocking(move || Ok(to_geoparquet(&source, &target, None))).await?;
    if let Err(error) = read {
        let _ = std::fs::remove_file(&layer_path);
        return Err(match error {
            CloudError::Invalid(message) => {
                AppError::new(ErrorKind::Invalid, "unreadable_file", message)
            }
            other => AppError::new(
                ErrorKind::Internal,
                "pointcloud_unreadable",
                other.to_string(),
            ),
        });
    }
    let mut source = crate::datasets::upload::source_for(&layer_path);
    source.format = Some(format.to_owned());
    let engine = state.store();
    let (key, stored_path) = (id.to_owned(), path.display().to_string());
    let result = blocking(move || engine.ingest(&key, &name, &stored_path, &source)).await?;
    let dataset: Dataset = result
        .map_err(|rejected| AppError::new(ErrorKind::Invalid, "unreadable_file", rejected.0))?
        .into();
    crate::datasets::ingest::announce_created(state, &dataset);
    Ok(dataset)
}
