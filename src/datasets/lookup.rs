//! Finding a stored dataset by id (its layers by name: `loaded_layer`).

use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;

/// 400 unless `id` is a UUID (as every dataset id is).
pub fn check_id(id: &str) -> Result<(), AppError> {
    uuid::Uuid::parse_str(id)
        .map(|_| ())
        .map_err(|_| AppError::bad_request(format!("dataset id {id:?} is not a UUID")))
}

/// The stored dataset `id`; 404 when there is none.
pub async fn find(
    state: &AppState,
    id: &str,
) -> Result<geomill_backends::store::DatasetRecord, AppError> {
    check_id(id)?;
    let engine = state.store();
    let key = id.to_owned();
    blocking(move || engine.dataset(&key))
        .await?
        .ok_or_else(|| AppError::not_found(format!("no dataset {id}")))
}
