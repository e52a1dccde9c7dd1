//! Blocking store and engine calls run off the async threads, their failures as API errors
//! (`From<BackendError> for AppError`, `src/error.rs`).

use crate::error::AppError;

/// Runs a blocking engine call off the async threads.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, geomill_backends::BackendError> + Send + 'static,
) -> Result<T, AppError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AppError::internal(&e))?
        .map_err(AppError::from)
}
