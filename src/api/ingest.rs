//! Where datasets come from: a multipart upload, a URL to download (`import-url`), or a remote
//! WFS / OGC API layer registered without downloading (`ogc`). Each new dataset is announced on
//! the event bus.

use axum::Json;
use axum::Router;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::StatusCode;
use axum::routing::post;
use serde::Deserialize;

use super::extract::ApiJson;
use crate::blocking::blocking;
use crate::datasets::fetch::UrlPolicy;
use crate::datasets::ingest::{announce_created, ingest_parts, ingest_stored};
use crate::datasets::model::Dataset;
use crate::datasets::{inspect, remote, upload};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/datasets/upload",
            post(upload_dataset).layer(DefaultBodyLimit::disable()),
        )
        .route("/datasets/import-url", post(import_url))
        .route("/datasets/ogc", post(register_ogc))
}

/// Upload a spatial file (multipart field `file`; optional text field `name`). Every layer GDAL
/// finds is loaded. The format is sniffed from the bytes (an extension they contradict is a
/// 422 `format_mismatch`); a zip archive is checked before it is read (422 `unsafe_archive`:
/// too many entries, too large uncompressed, an absurd compression ratio, an entry name leaving
/// the archive, a symbolic link). A file GDAL cannot read, or without geometry, is a 422. A
/// refused upload leaves nothing behind.
#[utoipa::path(post, path = "/datasets/upload", tag = "datasets",
    request_body(content_type = "multipart/form-data", content = Object, description = "field file: the spatial file (repeatable, at most 32); field name: optional display name"),
    responses(
        (status = 201, body = Dataset),
        (status = 400, description = "Not multipart, no usable file name, too many files", body = crate::api::error::ErrorBody),
        (status = 413, description = "Larger than GEOMILL_MAX_UPLOAD_MB", body = crate::api::error::ErrorBody),
        (status = 422, description = "`format_mismatch`, `unsafe_archive` or `unreadable_file`", body = crate::api::error::ErrorBody),
    ))]
pub async fn upload_dataset(
    State(state): State<AppState>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, Json<Dataset>), AppError> {
    let mut multipart = multipart.map_err(|e| {
        AppError::bad_request(format!(
            "the body is not multipart/form-data: {}",
            e.body_text()
        ))
    })?;
    let id = uuid::Uuid::new_v4().to_string();
    let folder = upload::folder(&state.config().uploads_dir(), &id);
    let outcome = receive(&state, &mut multipart, &id, &folder).await;
    if outcome.is_err() {
        let _ = tokio::fs::remove_dir_all(&folder).await;
    }
    outcome.map(|dataset| (StatusCode::CREATED, Json(dataset)))
}

async fn receive(
    state: &AppState,
    multipart: &mut Multipart,
    id: &str,
    folder: &std::path::Path,
) -> Result<Dataset, AppError> {
    let limit = state.config().max_upload_mb.saturating_mul(1024 * 1024);
    let mut stored: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut given_name: Option<String> = None;
    while let Some(mut field) = multipart.next_field().await.map_err(|e| {
        AppError::bad_request(format!("the body is not valid multipart/form-data: {e}"))
    })? {
        match field.name() {
            Some("file") => {
                let name = field
                    .file_name()
                    .and_then(upload::base_name)
                    .ok_or_else(|| AppError::bad_request("a file field has no usable file name"))?;
                if stored.len() == upload::MAX_FILES {
                    return Err(AppError::bad_request(format!(
                        "an upload has at most {} files",
                        upload::MAX_FILES
                    )));
                }
                if stored.iter().any(|(n, _)| *n == name) {
                    return Err(AppError::bad_request(format!("file {name} was sent twice")));
                }
                tokio::fs::create_dir_all(folder)
                    .await
                    .map_err(|e| AppError::internal(&e))?;
                let path = folder.join(&name);
                let sent: u64 = upload::total_size(folder).await;
                upload::save(&mut field, &path, limit, sent, "upload").await?;
                stored.push((name, path));
            }
            Some("name") => given_name = Some(upload::text_field(&mut field, "name").await?),
            _ => {}
        }
    }
    let stored = inspect::check_files(stored, limit).await?;
    let parts = upload::parquet_parts(&stored).unwrap_or_default();
    let (file_name, path) = upload::main_file(stored)
        .ok_or_else(|| AppError::bad_request("multipart field `file` is missing"))?;
    let name = given_name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(file_name);
    if let [(_, first), more @ ..] = parts.as_slice() {
        let more: Vec<_> = more.iter().map(|(_, path)| path.clone()).collect();
        return ingest_parts(state, id, name, first, &more).await;
    }
    ingest_stored(state, id, name, &path).await
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    /// An http(s) URL of a spatial file.
    pub url: String,
    /// Display name (default: the file name).
    #[serde(default)]
    pub name: Option<String>,
}

/// Fetch a spatial file from a URL and load it like an upload. Private, loopback and
/// link-local addresses are refused (also as a redirect's target) unless
/// GEOMILL_ALLOW_PRIVATE_URLS is set or GEOMILL_ALLOWED_URL_HOSTS names the host.
#[utoipa::path(post, path = "/datasets/import-url", tag = "datasets", request_body = ImportBody,
    responses((status = 201, body = Dataset), (status = 400, description = "`url_not_allowed`: not http(s), or a hop's address is not public", body = crate::api::error::ErrorBody),
        (status = 413, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn import_url(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ImportBody>,
) -> Result<(StatusCode, Json<Dataset>), AppError> {
    let id = uuid::Uuid::new_v4().to_string();
    let folder = upload::folder(&state.config().uploads_dir(), &id);
    let outcome = async {
        tokio::fs::create_dir_all(&folder)
            .await
            .map_err(|e| AppError::internal(&e))?;
        let limit = state.config().max_upload_mb.saturating_mul(1024 * 1024);
        let path = crate::datasets::fetch::download(
            &body.url,
            |name| folder.join(name),
            limit,
            &UrlPolicy::from_config(state.config()),
        )
        .await?;
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let checked = inspect::check_files(vec![(file_name.clone(), path)], limit).await?;
        let path = checked
            .into_iter()
            .next()
            .map(|(_, p)| p)
            .unwrap_or_default();
        let name = body
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(file_name);
        ingest_stored(&state, &id, name, &path).await
    }
    .await;
    if outcome.is_err() {
        let _ = tokio::fs::remove_dir_all(&folder).await;
    }
    outcome.map(|dataset| (StatusCode::CREATED, Json(dataset)))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OgcBody {
    /// The service: a WFS endpoint, or an OGC API landing page (a collection's URL is accepted).
    pub url: String,
    /// `WFS`, or `OAPIF` / `OGC API - Features`.
    pub service_type: String,
    /// The WFS feature type name, or the OGC API collection id.
    pub layer_name: String,
    /// Display name (default: the layer name).
    #[serde(default)]
    pub name: Option<String>,
}

/// Register a remote WFS feature type or OGC API Features collection without downloading its
/// features: only its description is fetched, to check that the service offers the layer. The
/// features are fetched and loaded on first use (features, fields, export, SQL, pipelines),
/// through the same request-forgery guard as import-url.
#[utoipa::path(post, path = "/datasets/ogc", tag = "datasets", request_body = OgcBody,
    responses((status = 201, body = Dataset), (status = 400, description = "An unknown service type, or `url_not_allowed`: not http(s), or a hop's address is not public", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "The service does not offer the layer", body = crate::api::error::ErrorBody)))]
pub async fn register_ogc(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<OgcBody>,
) -> Result<(StatusCode, Json<Dataset>), AppError> {
    let service = remote::Service::parse(&body.service_type).ok_or_else(|| {
        AppError::bad_request(format!(
            "service_type {:?} is not WFS or OAPIF (OGC API - Features)",
            body.service_type
        ))
    })?;
    let layer = body.layer_name.trim().to_owned();
    if layer.is_empty() {
        return Err(AppError::bad_request("layer_name is empty"));
    }
    let base = remote::base_url(service, &body.url, &layer)?;
    let policy = UrlPolicy::from_config(state.config());
    let crs = remote::describe(service, &base, &layer, &policy).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let name = body
        .name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| layer.clone());
    let record = geomill_backends::store::RemoteLayer {
        service_type: service.label().to_owned(),
        url: base,
        layer_name: layer,
        loaded_at: None,
    };
    let engine = state.store();
    let dataset: Dataset =
        blocking(move || engine.register_remote(&id, &name, crs.as_deref(), &record))
            .await?
            .into();
    announce_created(&state, &dataset);
    Ok((StatusCode::CREATED, Json(dataset)))
}
