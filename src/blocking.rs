//! Blocking store and engine calls run off the async threads, their failures as API errors.

use crate::error::ApiError;

/// Runs a blocking engine call off the async threads.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, geomill_backends::BackendError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .map_err(engine_error)
}

/// The PostgreSQL store unreachable (persistent mode) is a 503 naming it; data a file format
/// cannot hold is a 422 saying why; any other engine failure is unexpected (500).
pub fn engine_error(error: geomill_backends::BackendError) -> ApiError {
    match error {
        geomill_backends::BackendError::Unsupported(reason) => ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported_by_format",
            reason,
        ),
        geomill_backends::BackendError::Unavailable {
            engine: "postgis", ..
        } => crate::execute::postgis::postgis_error(error),
        other => ApiError::internal(&other),
    }
}
