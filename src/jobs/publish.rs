//! Publishing a job's result: the result file becomes a dataset of its own (so an OGC API
//! collection, tiles and a map), once per job, whether asked for at submission or later.

use geomill_backends::store::{JobRecord, Publication};

use crate::blocking::blocking;
use crate::datasets::export::file_stem;
use crate::datasets::model::Dataset;
use crate::error::AppError;
use crate::state::AppState;

/// The dataset a job's result is published as, and whether this call created it.
pub struct Published {
    pub dataset: Dataset,
    pub created: bool,
}

/// Asks for the result of `job_id` to be published when the job completes.
pub async fn mark(state: &AppState, job_id: &str) -> Result<(), AppError> {
    let engine = state.store();
    let key = job_id.to_owned();
    blocking(move || engine.mark_for_publication(&key)).await
}

/// Whether `job_id` was marked for publication at submission and is not published yet.
pub async fn is_pending(state: &AppState, job_id: &str) -> Result<bool, AppError> {
    let engine = state.store();
    let key = job_id.to_owned();
    Ok(blocking(move || engine.publication(&key)).await? == Publication::Pending)
}

/// The dataset `job`'s result is published as, publishing it first if it is not (or if that
/// dataset was deleted since). `result_path` is the job's result file.
pub async fn publish(
    state: &AppState,
    job: &JobRecord,
    result_path: &str,
) -> Result<Published, AppError> {
    let engine = state.store();
    let key = job.id.clone();
    if let Publication::Dataset(id) = blocking(move || engine.publication(&key)).await? {
        let engine = state.store();
        if let Some(record) = blocking(move || engine.dataset(&id)).await? {
            return Ok(Published {
                dataset: record.into(),
                created: false,
            });
        }
    }
    let dataset_id = uuid::Uuid::new_v4().to_string();
    let folder = crate::datasets::upload::folder(&state.config().uploads_dir(), &dataset_id);
    let copy = folder.join(format!("{}_result.gpkg", file_stem(&job.name)));
    let outcome = async {
        tokio::fs::create_dir_all(&folder)
            .await
            .map_err(|e| AppError::internal(&e))?;
        tokio::fs::copy(result_path, &copy)
            .await
            .map_err(|e| AppError::internal(&e))?;
        let dataset =
            crate::datasets::ingest::ingest_stored(state, &dataset_id, job.name.clone(), &copy)
                .await?;
        let engine = state.store();
        let (job_id, key) = (job.id.clone(), dataset_id.clone());
        blocking(move || engine.record_publication(&job_id, &key)).await?;
        Ok(dataset)
    }
    .await;
    match outcome {
        Ok(dataset) => Ok(Published {
            dataset,
            created: true,
        }),
        Err(error) => {
            let _ = tokio::fs::remove_dir_all(&folder).await;
            Err(error)
        }
    }
}
