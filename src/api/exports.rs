//! Dataset exports: `POST /api/portal/datasets/export` (any format) and
//! `POST /datasets/export-gpkg`.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use geomill_planner::plan::operator::ExportFormat;
use serde::Deserialize;

use super::extract::ApiJson;
use crate::datasets::export::{ExportSource, ExportedFile, export};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/portal/datasets/export", post(export_any))
        .route("/datasets/export-gpkg", post(export_gpkg))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportBody {
    pub dataset_id: String,
    /// gpkg, geojson, fgb, parquet (GeoParquet), shp (zipped), csv (WKT), kml, gml, las, laz
    /// (a point layer).
    #[serde(default)]
    pub format: Option<String>,
    /// The layer to export (default: the first).
    #[serde(default)]
    pub layer: Option<String>,
}

pub(crate) fn parse_format(text: &str) -> Result<ExportFormat, AppError> {
    serde_json::from_value(serde_json::Value::String(text.to_ascii_lowercase())).map_err(|_| {
        AppError::unprocessable(format!(
            "format {text:?} is not one of gpkg, geojson, fgb, parquet, shp, csv, kml, gml, las, laz"
        ))
    })
}

async fn run(
    state: &AppState,
    body: ExportBody,
    format: ExportFormat,
) -> Result<Response, AppError> {
    uuid::Uuid::parse_str(&body.dataset_id).map_err(|_| {
        AppError::unprocessable(format!("dataset_id {:?} is not a UUID", body.dataset_id))
    })?;
    let engine = state.store();
    let id = body.dataset_id.clone();
    let dataset = tokio::task::spawn_blocking(move || engine.dataset(&id))
        .await
        .map_err(|e| AppError::internal(&e))?
        .map_err(|e| AppError::internal(&e))?
        .ok_or_else(|| AppError::not_found(format!("no dataset {}", body.dataset_id)))?;
    let dataset = crate::datasets::remote::ensure_loaded(state, dataset).await?;
    let names: Vec<String> = dataset.layers.iter().map(|l| l.name.clone()).collect();
    let layer = match &body.layer {
        Some(name) => dataset.layers.iter().find(|l| &l.name == name),
        None => dataset.layers.first(),
    }
    .cloned()
    .ok_or_else(|| {
        AppError::not_found(format!(
            "dataset {} has no layer {:?} (layers: {})",
            dataset.id,
            body.layer,
            names.join(", ")
        ))
    })?;
    let file: ExportedFile = export(
        state,
        &dataset.name,
        ExportSource::Layer {
            dataset_id: dataset.id.clone(),
            layer,
        },
        format,
    )
    .await?;
    Ok(attachment(file))
}

/// A file as a download (Content-Disposition names it).
pub(crate) fn attachment(file: ExportedFile) -> Response {
    (
        [
            (header::CONTENT_TYPE, file.content_type.to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", file.file_name),
            ),
        ],
        file.bytes,
    )
        .into_response()
}

/// Export one layer of a dataset as a file.
#[utoipa::path(post, path = "/api/portal/datasets/export", tag = "datasets", request_body = ExportBody,
    responses((status = 200, description = "The file (Content-Disposition names it)"),
        (status = 404, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn export_any(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ExportBody>,
) -> Result<Response, AppError> {
    let format = parse_format(body.format.as_deref().unwrap_or("gpkg"))?;
    run(&state, body, format).await
}

/// Export one layer of a dataset as a GeoPackage.
#[utoipa::path(post, path = "/datasets/export-gpkg", tag = "datasets", request_body = ExportBody,
    responses((status = 200, description = "The GeoPackage"),
        (status = 404, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn export_gpkg(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ExportBody>,
) -> Result<Response, AppError> {
    if body
        .format
        .as_deref()
        .is_some_and(|f| !f.eq_ignore_ascii_case("gpkg"))
    {
        return Err(AppError::unprocessable(
            "export-gpkg writes GeoPackages only: use /api/portal/datasets/export",
        ));
    }
    run(&state, body, ExportFormat::Gpkg).await
}
