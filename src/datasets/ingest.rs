//! Loading a file already in a dataset's folder into the store, and announcing new datasets.

use serde_json::json;

use crate::blocking::blocking;
use crate::datasets::model::Dataset;
use crate::datasets::upload;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// Publishes `dataset_created` on the event bus.
pub fn announce_created(state: &AppState, dataset: &Dataset) {
    let layers: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
    state.events().publish(
        "dataset_created",
        json!({"dataset_id": dataset.id, "name": dataset.name, "format": dataset.format, "layers": layers}),
    );
}

/// Loads a file already in the dataset's folder; a file GDAL cannot read is a 422.
pub async fn ingest_stored(
    state: &AppState,
    id: &str,
    name: String,
    path: &std::path::Path,
) -> Result<Dataset, AppError> {
    ingest_parts(state, id, name, path, &[]).await
}

/// Loads the file `path` and the further `parts` of the same layer (a partitioned Parquet
/// layer) as one dataset; a file GDAL or the Parquet reader cannot read is a 422.
pub async fn ingest_parts(
    state: &AppState,
    id: &str,
    name: String,
    path: &std::path::Path,
    parts: &[std::path::PathBuf],
) -> Result<Dataset, AppError> {
    if crate::datasets::pointcloud::is_pointcloud_path(path) {
        return crate::datasets::pointcloud::ingest(state, id, name, path).await;
    }
    if crate::datasets::raster::is_raster_path(path) {
        let dataset: Dataset = crate::datasets::raster::register(state, id, name, path)
            .await?
            .into();
        announce_created(state, &dataset);
        return Ok(dataset);
    }
    let mut source = upload::source_for(&readable_path(state, path).await?);
    source.parts = parts.iter().map(|p| p.display().to_string()).collect();
    let engine = state.store();
    let (key, stored_path) = (id.to_owned(), path.display().to_string());
    let result = blocking(move || engine.ingest(&key, &name, &stored_path, &source)).await?;
    match result {
        Ok(record) => {
            let dataset: Dataset = record.into();
            announce_created(state, &dataset);
            Ok(dataset)
        }
        Err(rejected) => Err(AppError::new(
            ErrorKind::Invalid,
            "unreadable_file",
            rejected.0,
        )),
    }
}

/// The path GDAL reads `path` from: a zip archive unpacked beside it (`<name>.unzipped/`), any
/// other file as it is.
pub async fn readable_path(
    state: &AppState,
    path: &std::path::Path,
) -> Result<std::path::PathBuf, AppError> {
    let is_zip = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    if !is_zip {
        return Ok(path.to_path_buf());
    }
    let (archive, folder) = (path.to_path_buf(), path.with_extension("unzipped"));
    let max_total = state
        .config()
        .max_upload_mb
        .saturating_mul(1 << 20)
        .saturating_mul(crate::datasets::inspect::MAX_EXPANSION);
    blocking(move || {
        Ok(crate::datasets::unpack::unpack(
            &archive, &folder, max_total,
        ))
    })
    .await?
    .map_err(|e| {
        AppError::new(
            ErrorKind::Invalid,
            "unreadable_file",
            format!("the archive cannot be unpacked: {e}"),
        )
    })
}
