//! Layer styles: `GET /datasets/{id}/styles` (QML, or the JSON model), `PUT` (the JSON model),
//! `POST /styles/import` (a QML file QGIS wrote).

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::{ApiJson, ApiQuery};
use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;
use crate::styles::Style;
use crate::styles::qml_read::from_qml;
use crate::styles::qml_write::to_qml;
use crate::styles::stored::stored_style;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/datasets/{id}/styles", get(read).put(update))
        .route("/datasets/{id}/styles/import", post(import))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StyleQuery {
    /// The layer (default: the dataset's first).
    pub layer: Option<String>,
    /// `qml` (default, the file QGIS reads) or `json` (the style model).
    pub format: Option<String>,
}

/// The layer of dataset `id` a request names (default: the first). A style is the catalog's
/// alone: a remote layer is not fetched for it.
async fn layer_of(
    state: &AppState,
    id: &str,
    layer: Option<&str>,
) -> Result<geomill_backends::store::LayerRecord, AppError> {
    let dataset = crate::datasets::lookup::find(state, id).await?;
    let found = match layer {
        Some(name) => dataset.layers.iter().find(|l| l.name == name),
        None => dataset.layers.first(),
    };
    found.cloned().ok_or_else(|| {
        let known: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
        AppError::not_found(format!(
            "dataset {id} has no layer {:?} (layers: {})",
            layer.unwrap_or_default(),
            known.join(", ")
        ))
    })
}

/// A layer's style as QML (or, with `format=json`, the model); a layer without a stored style
/// answers the default single symbol (`X-Geomill-Style: default`).
#[utoipa::path(get, path = "/datasets/{id}/styles", tag = "datasets",
    params(("id" = String, Path), StyleQuery),
    responses((status = 200, description = "The style as QGIS QML, or (format=json) as the JSON model",
            content((String = "text/xml"), (Style = "application/json"))),
        (status = 400, description = "The id is not a UUID, or an unknown format", body = crate::api::error::ErrorBody),
        (status = 404, description = "No such dataset or layer", body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<StyleQuery>,
) -> Result<Response, AppError> {
    let layer = layer_of(&state, &id, query.layer.as_deref()).await?;
    let (style, stored) = stored_style(&state, &id, &layer).await?;
    let origin = if stored { "stored" } else { "default" };
    match query.format.as_deref().unwrap_or("qml") {
        "json" => Ok(([("x-geomill-style", origin)], Json(style)).into_response()),
        "qml" => {
            let disposition = format!(
                "attachment; filename=\"{}.qml\"",
                layer.name.replace('"', "")
            );
            Ok((
                [
                    (header::CONTENT_TYPE, "text/xml; charset=utf-8".to_owned()),
                    (header::CONTENT_DISPOSITION, disposition),
                    (
                        header::HeaderName::from_static("x-geomill-style"),
                        origin.to_owned(),
                    ),
                ],
                to_qml(&style),
            )
                .into_response())
        }
        other => Err(AppError::bad_request(format!(
            "format must be qml or json, got {other:?}"
        ))),
    }
}

/// Checks and stores a style; answers it.
async fn store_style(
    state: &AppState,
    id: &str,
    layer: &geomill_backends::store::LayerRecord,
    style: &Style,
) -> Result<(), AppError> {
    let problems = style.problems();
    if !problems.is_empty() {
        let detail: Vec<Value> = problems
            .iter()
            .map(|(path, message)| json!({"path": path, "message": message}))
            .collect();
        return Err(AppError::unprocessable(format!(
            "the style is not valid: {}",
            problems
                .iter()
                .map(|(path, message)| format!("{path}: {message}"))
                .collect::<Vec<_>>()
                .join("; ")
        ))
        .with_detail(json!({ "errors": detail })));
    }
    let text = serde_json::to_string(style).map_err(|e| AppError::internal(&e))?;
    let store = state.store();
    let (key, name, now) = (id.to_owned(), layer.name.clone(), crate::timestamp::now());
    blocking(move || store.put_style(&key, &name, &text, &now)).await?;
    Ok(())
}

/// Replaces a layer's style with the JSON model in the body.
#[utoipa::path(put, path = "/datasets/{id}/styles", tag = "datasets",
    params(("id" = String, Path), StyleQuery), request_body = Style,
    responses((status = 200, description = "The stored style", body = Style),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "Not a valid style: every problem with its path", body = crate::api::error::ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<StyleQuery>,
    ApiJson(style): ApiJson<Style>,
) -> Result<Json<Style>, AppError> {
    let layer = layer_of(&state, &id, query.layer.as_deref()).await?;
    store_style(&state, &id, &layer, &style).await?;
    Ok(Json(style))
}

/// The largest QML file an import reads (QGIS styles are a few kilobytes).
const MAX_QML_BYTES: usize = 2 << 20;

/// Imports a QML file QGIS wrote as the layer's style: the body itself (as sent, or as XML), or
/// the file field `file` of a multipart form (`curl -F file=@style.qml`, a browser's file
/// input); answers the style kept and what the model could not hold.
#[utoipa::path(post, path = "/datasets/{id}/styles/import", tag = "datasets",
    params(("id" = String, Path), StyleQuery), request_body(content = String, content_type = "text/xml", description = "the QML itself, or multipart/form-data with the QML in field `file`"),
    responses((status = 200, description = "{style, dropped: [what was not kept]}", body = Object),
        (status = 400, description = "The id is not a UUID; a multipart body without field `file`", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody),
        (status = 413, description = "A QML file over 2 MiB", body = crate::api::error::ErrorBody),
        (status = 422, description = "Not XML, not a QGIS style, or a renderer the model does not hold", body = crate::api::error::ErrorBody)))]
pub async fn import(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<StyleQuery>,
    request: Request,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let layer = layer_of(&state, &id, query.layer.as_deref()).await?;
    let body = qml_of(request, &state).await?;
    let text = std::str::from_utf8(&body)
        .map_err(|_| AppError::unprocessable("the QML is not UTF-8 text"))?;
    let imported = from_qml(text)
        .map_err(|reason| AppError::unprocessable(format!("cannot import the style: {reason}")))?;
    store_style(&state, &id, &layer, &imported.style).await?;
    Ok((
        StatusCode::OK,
        Json(json!({ "style": imported.style, "dropped": imported.dropped })),
    ))
}

/// The QML an import request carries: field `file` of a multipart form, else the body.
async fn qml_of(request: Request, state: &AppState) -> Result<Bytes, AppError> {
    let too_large = || {
        AppError::new(
            ErrorKind::TooLarge,
            "payload_too_large",
            format!("a QML file is at most {} MiB", MAX_QML_BYTES >> 20),
        )
    };
    let is_multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        });
    if !is_multipart {
        return axum::body::to_bytes(request.into_body(), MAX_QML_BYTES)
            .await
            .map_err(|_| too_large());
    }
    let mut form = Multipart::from_request(request, state).await.map_err(|e| {
        AppError::bad_request(format!(
            "the body is not multipart/form-data: {}",
            e.body_text()
        ))
    })?;
    while let Some(field) = form.next_field().await.map_err(|e| {
        AppError::bad_request(format!("the body is not valid multipart/form-data: {e}"))
    })? {
        if field.name() == Some("file") {
            let bytes = field.bytes().await.map_err(|e| {
                AppError::bad_request(format!("the file field was interrupted: {e}"))
            })?;
            if bytes.len() > MAX_QML_BYTES {
                return Err(too_large());
            }
            return Ok(bytes);
        }
    }
    Err(AppError::bad_request(
        "the multipart body has no field `file` holding the QML",
    ))
}
