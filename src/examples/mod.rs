//! Example datasets: each spatial file of `GEOMILL_EXAMPLES_DIR`, ingested once into the store
//! (on first use) and served read-only under `/examples`, kept out of `/datasets`.

pub mod example;

use std::path::{Path, PathBuf};

use geomill_backends::store::DatasetRecord;

use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;
pub use example::{Example, example_id};

/// Extensions of the files read as examples; the other files of the folder (a Shapefile's
/// `.dbf`, `.shx`, `.prj`, `.cpg`, notes) are left alone.
const EXTENSIONS: &[&str] = &[
    "gpkg", "shp", "geojson", "json", "fgb", "zip", "parquet", "csv", "kml", "gml",
];

/// Every example, sorted by id; loaded on first call (an empty list without
/// `GEOMILL_EXAMPLES_DIR`). A file that cannot be read is left out and logged.
pub async fn all(state: &AppState) -> Result<&[Example], AppError> {
    state
        .examples()
        .get_or_try_init(|| load(state))
        .await
        .map(Vec::as_slice)
}

/// One example and its dataset; 404 when there is no such example.
pub async fn find(state: &AppState, id: &str) -> Result<(Example, DatasetRecord), AppError> {
    let example = all(state)
        .await?
        .iter()
        .find(|e| e.id == id)
        .cloned()
        .ok_or_else(|| AppError::not_found(format!("no example {id:?}")))?;
    let engine = state.store();
    let key = example.dataset_id.clone();
    let dataset = blocking(move || engine.dataset(&key))
        .await?
        .ok_or_else(|| AppError::not_found(format!("example {id:?} is no longer stored")))?;
    Ok((example, dataset))
}

/// Whether `dataset_id` holds an example (and so may not be changed).
pub async fn is_example(state: &AppState, dataset_id: &str) -> Result<bool, AppError> {
    Ok(all(state).await?.iter().any(|e| e.dataset_id == dataset_id))
}

/// The ids of the datasets holding examples.
pub async fn dataset_ids(state: &AppState) -> Result<Vec<String>, AppError> {
    Ok(all(state)
        .await?
        .iter()
        .map(|e| e.dataset_id.clone())
        .collect())
}

/// The example files of `folder`, sorted by name.
async fn files(folder: &Path) -> Result<Vec<(String, PathBuf)>, AppError> {
    let mut entries = tokio::fs::read_dir(folder).await.map_err(|e| {
        AppError::internal(&format!("GEOMILL_EXAMPLES_DIR {}: {e}", folder.display()))
    })?;
    let mut found = Vec::new();
    while let Some(entry) = entries
        .next_entry()
        .await
        .map_err(|e| AppError::internal(&e))?
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if path.is_file() && EXTENSIONS.contains(&extension.as_str()) {
            found.push((name, path));
        }
    }
    found.sort();
    Ok(found)
}

/// Loads every example file not stored yet (a file is known by its path, which its dataset
/// keeps: a restart with the same folder reuses the stored datasets).
async fn load(state: &AppState) -> Result<Vec<Example>, AppError> {
    let Some(folder) = state.config().examples_dir.clone() else {
        return Ok(Vec::new());
    };
    let folder = tokio::fs::canonicalize(&folder).await.map_err(|e| {
        AppError::internal(&format!("GEOMILL_EXAMPLES_DIR {}: {e}", folder.display()))
    })?;
    let stored = crate::execute::all_datasets(state).await?;
    let mut examples: Vec<Example> = Vec::new();
    for (file, path) in files(&folder).await? {
        let id = example_id(&file);
        if examples.iter().any(|e| e.id == id) {
            tracing::warn!(file = %file, example = %id, "examples: another file has this id; left out");
            continue;
        }
        let text = path.display().to_string();
        let dataset_id = match stored.iter().find(|d| d.path == text) {
            Some(dataset) => dataset.id.clone(),
            None => {
                let key = uuid::Uuid::new_v4().to_string();
                match crate::datasets::ingest::ingest_stored(state, &key, id.clone(), &path).await {
                    Ok(dataset) => dataset.id,
                    Err(error) if error.kind.is_the_requests() => {
                        tracing::warn!(file = %file, message = %error.message, "examples: a file cannot be read; left out");
                        continue;
                    }
                    Err(error) => return Err(error),
                }
            }
        };
        examples.push(Example {
            id,
            file,
            dataset_id,
        });
    }
    examples.sort_by(|a, b| a.id.cmp(&b.id));
    tracing::info!(count = examples.len(), "examples loaded");
    Ok(examples)
}
