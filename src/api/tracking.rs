//! Change tracking of a dataset's layers, one layer at a time: `POST /datasets/{id}/
//! enable_tracking` and `disable_tracking` (`{"layer"}`), `GET /datasets/{id}/tracking_status`.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::ApiJson;
use crate::error::AppError;
use crate::state::AppState;
use crate::triggers::tracking;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/datasets/{id}/enable_tracking", post(enable))
        .route("/datasets/{id}/disable_tracking", post(disable))
        .route("/datasets/{id}/tracking_status", get(status))
}

/// The layer to track (default: the dataset's first).
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrackingBody {
    pub layer: Option<String>,
}

fn layer_example() -> Value {
    json!({"layer": "countries"})
}

async fn layer_of(state: &AppState, id: &str, body: TrackingBody) -> Result<String, AppError> {
    match body.layer {
        Some(layer) => Ok(layer),
        None => crate::datasets::lookup::find(state, id)
            .await?
            .layers
            .first()
            .map(|l| l.name.clone())
            .ok_or_else(|| AppError::not_found(format!("dataset {id} has no layer"))),
    }
}

/// Track the changes of one layer; answers the dataset's tracking status.
#[utoipa::path(post, path = "/datasets/{id}/enable_tracking", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")),
    request_body(content = TrackingBody, example = layer_example),
    responses((status = 200, description = "{dataset_id, layers: [{layer, table, engine, pending}]}", body = Object),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, description = "Unknown dataset or layer", body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody),
        (status = 503, description = "The layer lives in PostgreSQL, which is unreachable", body = crate::api::error::ErrorBody)))]
pub async fn enable(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<TrackingBody>,
) -> Result<Json<Value>, AppError> {
    let layer = layer_of(&state, &id, body).await?;
    Ok(Json(tracking::enable(&state, &id, &layer).await?))
}

/// Stop tracking one layer; answers the dataset's tracking status.
#[utoipa::path(post, path = "/datasets/{id}/disable_tracking", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")),
    request_body(content = TrackingBody, example = layer_example),
    responses((status = 200, description = "{dataset_id, layers}", body = Object),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, description = "Unknown dataset or layer, or a layer not tracked", body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody),
        (status = 503, description = "The layer lives in PostgreSQL, which is unreachable", body = crate::api::error::ErrorBody)))]
pub async fn disable(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<TrackingBody>,
) -> Result<Json<Value>, AppError> {
    let layer = layer_of(&state, &id, body).await?;
    Ok(Json(tracking::disable(&state, &id, &layer).await?))
}

/// The tracked layers of a dataset and their pending (not yet consumed) changes.
#[utoipa::path(get, path = "/datasets/{id}/tracking_status", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")),
    responses((status = 200, description = "{dataset_id, layers: [{layer, table, engine, pending}]}", body = Object),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn status(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    Ok(Json(tracking::status(&state, &id).await?))
}
