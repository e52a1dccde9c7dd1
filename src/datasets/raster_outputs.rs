//! The rasters a run's raster steps wrote, registered as raster datasets when it completes.

use std::path::Path;

use crate::error::AppError;
use crate::state::AppState;

/// A raster dataset a run wrote.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct WrittenRaster {
    pub id: String,
    pub name: String,
}

/// Registers each raster a run wrote into `folder` as a raster dataset named after its file,
/// moved into its own upload folder; answers them in name order. A raster the run wrote that
/// GDAL cannot describe is a failure of the run (its file removed), never left out silently.
pub async fn register_outputs(
    state: &AppState,
    folder: &Path,
) -> Result<Vec<WrittenRaster>, AppError> {
    let Ok(mut entries) = tokio::fs::read_dir(folder).await else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    while let Some(entry) = entries
        .next_entry()
        .await
        .map_err(|e| AppError::internal(&e))?
    {
        let path = entry.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name.filter(|n| n.ends_with(".tif") && !n.ends_with(".staging.tif")) {
            files.push((name, path));
        }
    }
    files.sort();
    let mut written = Vec::with_capacity(files.len());
    for (file, path) in files {
        let id = uuid::Uuid::new_v4().to_string();
        let stored = super::upload::folder(&state.config().uploads_dir(), &id);
        tokio::fs::create_dir_all(&stored)
            .await
            .map_err(|e| AppError::internal(&e))?;
        let target = stored.join(&file);
        tokio::fs::rename(&path, &target)
            .await
            .map_err(|e| AppError::internal(&e))?;
        let name = file.trim_end_matches(".tif").to_owned();
        match super::raster::register(state, &id, name.clone(), &target).await {
            Ok(record) => {
                super::ingest::announce_created(state, &record.into());
                written.push(WrittenRaster { id, name });
            }
            Err(error) => {
                let _ = tokio::fs::remove_dir_all(&stored).await;
                return Err(AppError::internal(&format!(
                    "the raster {name} the run wrote cannot be registered: {}",
                    error.message
                )));
            }
        }
    }
    Ok(written)
}
