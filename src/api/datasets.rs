//! Datasets: upload, list, read, rename, delete, and pages of a layer's features.

use axum::Json;
use axum::Router;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::{ApiJson, ApiQuery};
use crate::datasets::fetch::UrlPolicy;
use crate::datasets::model::{Dataset, DatasetPage};
use crate::datasets::{inspect, remote, upload};
use crate::error::ApiError;
use crate::state::AppState;

/// Largest page of features or datasets.
pub const MAX_LIMIT: i64 = 10_000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/datasets/upload",
            post(upload_dataset).layer(DefaultBodyLimit::disable()),
        )
        .route("/datasets/import-url", post(import_url))
        .route("/datasets/ogc", post(register_ogc))
        .route("/datasets", get(list))
        .route("/datasets/{id}", get(read).patch(rename))
        .route("/api/portal/datasets/{id}", delete(remove))
        .route(
            "/api/portal/datasets/{id}/layers/{layer}/features",
            get(features),
        )
}

/// Runs a blocking engine call off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, geomill_backends::BackendError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .map_err(|e| ApiError::internal(&e))
}

fn check_id(id: &str) -> Result<(), ApiError> {
    uuid::Uuid::parse_str(id)
        .map(|_| ())
        .map_err(|_| ApiError::bad_request(format!("dataset id {id:?} is not a UUID")))
}

pub(crate) async fn find(
    state: &AppState,
    id: &str,
) -> Result<geomill_backends::duckdb::DatasetRecord, ApiError> {
    check_id(id)?;
    let engine = state.embedded();
    let key = id.to_owned();
    blocking(move || engine.dataset(&key))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no dataset {id}")))
}

/// A layer of a dataset, its features loaded (a remote layer is fetched on first use); 404
/// naming the layers when there is no such layer.
pub(crate) async fn find_layer(
    state: &AppState,
    id: &str,
    layer: &str,
) -> Result<geomill_backends::duckdb::LayerRecord, ApiError> {
    Ok(find_dataset_layer(state, id, layer).await?.1)
}

/// [`find_layer`] with the dataset it belongs to (as it is once the layer is loaded).
pub(crate) async fn find_dataset_layer(
    state: &AppState,
    id: &str,
    layer: &str,
) -> Result<
    (
        geomill_backends::duckdb::DatasetRecord,
        geomill_backends::duckdb::LayerRecord,
    ),
    ApiError,
> {
    let missing = |dataset: &geomill_backends::duckdb::DatasetRecord| {
        let known: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
        ApiError::not_found(format!(
            "dataset {id} has no layer {layer:?} (layers: {})",
            known.join(", ")
        ))
    };
    let dataset = find(state, id).await?;
    if !dataset.layers.iter().any(|l| l.name == layer) {
        return Err(missing(&dataset));
    }
    let dataset = remote::ensure_loaded(state, dataset).await?;
    match dataset.layers.iter().find(|l| l.name == layer).cloned() {
        Some(found) => Ok((dataset, found)),
        None => Err(missing(&dataset)),
    }
}

/// The stored layer a copy request names (`layer`, default the dataset's first) and the table
/// name it is to get (`name`, default the layer's): 1 to 63 characters, as PostgreSQL allows.
pub(crate) async fn layer_to_copy(
    state: &AppState,
    dataset_id: &str,
    layer: Option<&str>,
    name: Option<&str>,
) -> Result<(geomill_backends::duckdb::LayerRecord, String), ApiError> {
    let dataset = find(state, dataset_id).await?;
    let layer_name = layer
        .map(str::to_owned)
        .or_else(|| dataset.layers.first().map(|l| l.name.clone()))
        .ok_or_else(|| ApiError::unprocessable("the dataset has no layers"))?;
    let layer = find_layer(state, &dataset.id, &layer_name).await?;
    let table = name.map_or_else(|| layer.name.clone(), str::to_owned);
    if table.is_empty() || table.len() > 63 {
        return Err(ApiError::unprocessable(format!(
            "name {table:?}: a table name has 1 to 63 characters"
        )));
    }
    if table.contains('\0') {
        return Err(ApiError::unprocessable(format!(
            "name {table:?}: a table name has no NUL character"
        )));
    }
    Ok((layer, table))
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
        (status = 400, description = "Not multipart, no usable file name, too many files", body = crate::error::ErrorBody),
        (status = 413, description = "Larger than GEOMILL_MAX_UPLOAD_MB", body = crate::error::ErrorBody),
        (status = 422, description = "`format_mismatch`, `unsafe_archive` or `unreadable_file`", body = crate::error::ErrorBody),
    ))]
pub async fn upload_dataset(
    State(state): State<AppState>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, Json<Dataset>), ApiError> {
    let mut multipart = multipart.map_err(|e| {
        ApiError::bad_request(format!(
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
) -> Result<Dataset, ApiError> {
    let limit = state.config().max_upload_mb.saturating_mul(1024 * 1024);
    let mut stored: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut given_name: Option<String> = None;
    while let Some(mut field) = multipart.next_field().await.map_err(|e| {
        ApiError::bad_request(format!("the body is not valid multipart/form-data: {e}"))
    })? {
        match field.name() {
            Some("file") => {
                let name = field
                    .file_name()
                    .and_then(upload::base_name)
                    .ok_or_else(|| ApiError::bad_request("a file field has no usable file name"))?;
                if stored.len() == upload::MAX_FILES {
                    return Err(ApiError::bad_request(format!(
                        "an upload has at most {} files",
                        upload::MAX_FILES
                    )));
                }
                if stored.iter().any(|(n, _)| *n == name) {
                    return Err(ApiError::bad_request(format!("file {name} was sent twice")));
                }
                tokio::fs::create_dir_all(folder)
                    .await
                    .map_err(|e| ApiError::internal(&e))?;
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
    let (file_name, path) = upload::main_file(stored)
        .ok_or_else(|| ApiError::bad_request("multipart field `file` is missing"))?;
    let name = given_name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(file_name);
    ingest_stored(state, id, name, &path).await
}

/// Publishes `dataset_created` on the event bus.
fn announce_created(state: &AppState, dataset: &Dataset) {
    let layers: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
    state.events().publish(
        "dataset_created",
        json!({"dataset_id": dataset.id, "name": dataset.name, "format": dataset.format, "layers": layers}),
    );
}

/// Loads a file already in the dataset's folder; a file GDAL cannot read is a 422.
pub(crate) async fn ingest_stored(
    state: &AppState,
    id: &str,
    name: String,
    path: &std::path::Path,
) -> Result<Dataset, ApiError> {
    let source = upload::source_for(path);
    let engine = state.embedded();
    let (key, stored_path) = (id.to_owned(), path.display().to_string());
    let result = blocking(move || engine.ingest(&key, &name, &stored_path, &source)).await?;
    match result {
        Ok(record) => {
            let dataset: Dataset = record.into();
            announce_created(state, &dataset);
            Ok(dataset)
        }
        Err(rejected) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unreadable_file",
            rejected.0,
        )),
    }
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
    responses((status = 201, body = Dataset), (status = 400, description = "`url_not_allowed`: not http(s), or a hop's address is not public", body = crate::error::ErrorBody),
        (status = 413, body = crate::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::error::ErrorBody),
        (status = 422, body = crate::error::ErrorBody)))]
pub async fn import_url(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ImportBody>,
) -> Result<(StatusCode, Json<Dataset>), ApiError> {
    let id = uuid::Uuid::new_v4().to_string();
    let folder = upload::folder(&state.config().uploads_dir(), &id);
    let outcome = async {
        tokio::fs::create_dir_all(&folder)
            .await
            .map_err(|e| ApiError::internal(&e))?;
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
    responses((status = 201, body = Dataset), (status = 400, description = "An unknown service type, or `url_not_allowed`: not http(s), or a hop's address is not public", body = crate::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::error::ErrorBody),
        (status = 422, description = "The service does not offer the layer", body = crate::error::ErrorBody)))]
pub async fn register_ogc(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<OgcBody>,
) -> Result<(StatusCode, Json<Dataset>), ApiError> {
    let service = remote::Service::parse(&body.service_type).ok_or_else(|| {
        ApiError::bad_request(format!(
            "service_type {:?} is not WFS or OAPIF (OGC API - Features)",
            body.service_type
        ))
    })?;
    let layer = body.layer_name.trim().to_owned();
    if layer.is_empty() {
        return Err(ApiError::bad_request("layer_name is empty"));
    }
    let base = remote::base_url(service, &body.url, &layer)?;
    let policy = UrlPolicy::from_config(state.config());
    let crs = remote::describe(service, &base, &layer, &policy).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let name = body
        .name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| layer.clone());
    let record = geomill_backends::duckdb::RemoteLayer {
        service_type: service.label().to_owned(),
        url: base,
        layer_name: layer,
        loaded_at: None,
    };
    let engine = state.embedded();
    let dataset: Dataset =
        blocking(move || engine.register_remote(&id, &name, crs.as_deref(), &record))
            .await?
            .into();
    announce_created(&state, &dataset);
    Ok((StatusCode::CREATED, Json(dataset)))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size (default 100, at most 10000).
    #[param(minimum = 0, maximum = 10000)]
    pub limit: Option<i64>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    pub offset: Option<i64>,
}

pub(crate) fn page(limit: Option<i64>, offset: Option<i64>) -> Result<(i64, i64), ApiError> {
    let limit = limit.unwrap_or(100);
    let offset = offset.unwrap_or(0);
    if !(0..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be between 0 and {MAX_LIMIT}, got {limit}"
        )));
    }
    if offset < 0 {
        return Err(ApiError::bad_request(format!(
            "offset must not be negative, got {offset}"
        )));
    }
    Ok((limit, offset))
}

/// Datasets, newest first.
#[utoipa::path(get, path = "/datasets", tag = "datasets", params(PageQuery),
    responses((status = 200, body = DatasetPage), (status = 400, body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Json<DatasetPage>, ApiError> {
    let (limit, offset) = page(query.limit, query.offset)?;
    let engine = state.embedded();
    let (total, records) = blocking(move || engine.datasets(limit, offset)).await?;
    Ok(Json(DatasetPage {
        datasets: records.into_iter().map(Dataset::from).collect(),
        total,
        limit,
        offset,
    }))
}

/// One dataset.
#[utoipa::path(get, path = "/datasets/{id}", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")),
    responses((status = 200, body = Dataset), (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Dataset>, ApiError> {
    Ok(Json(find(&state, &id).await?.into()))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameBody {
    pub name: String,
}

/// Rename a dataset.
#[utoipa::path(patch, path = "/datasets/{id}", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")), request_body = RenameBody,
    responses((status = 200, body = Dataset), (status = 400, description = "The id is not a UUID", body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::error::ErrorBody),
        (status = 422, body = crate::error::ErrorBody)))]
pub async fn rename(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RenameBody>,
) -> Result<Json<Dataset>, ApiError> {
    let name = body.name.trim().to_owned();
    if name.is_empty() || name.len() > 255 {
        return Err(ApiError::unprocessable(
            "name must have 1 to 255 characters",
        ));
    }
    find(&state, &id).await?;
    let engine = state.embedded();
    let key = id.clone();
    blocking(move || engine.rename_dataset(&key, &name)).await?;
    Ok(Json(find(&state, &id).await?.into()))
}

/// Delete a dataset: its layers, its catalog rows and its uploaded file.
#[utoipa::path(delete, path = "/api/portal/datasets/{id}", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")),
    responses((status = 200, description = "{deleted: id}", body = Object), (status = 400, description = "The id is not a UUID", body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    find(&state, &id).await?;
    let engine = state.embedded();
    let key = id.clone();
    blocking(move || engine.delete_dataset(&key)).await?;
    let _ = tokio::fs::remove_dir_all(upload::folder(&state.config().uploads_dir(), &id)).await;
    state
        .events()
        .publish("dataset_deleted", json!({ "dataset_id": id }));
    Ok(Json(json!({ "deleted": id })))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeatureQuery {
    /// Page size (default 100, at most 10000).
    #[param(minimum = 0, maximum = 10000)]
    pub limit: Option<i64>,
    /// Features to skip (default 0).
    #[param(minimum = 0)]
    pub offset: Option<i64>,
    /// `minx,miny,maxx,maxy` in WGS 84 longitude/latitude.
    pub bbox: Option<String>,
}

pub(crate) fn parse_bbox(text: &str) -> Result<[f64; 4], ApiError> {
    let numbers: Vec<f64> = text
        .split(',')
        .map(|part| part.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ApiError::bad_request(format!(
                "bbox {text:?} is not four numbers minx,miny,maxx,maxy"
            ))
        })?;
    let [minx, miny, maxx, maxy] = numbers.as_slice() else {
        return Err(ApiError::bad_request(format!(
            "bbox {text:?} is not four numbers minx,miny,maxx,maxy"
        )));
    };
    if numbers.iter().any(|n| !n.is_finite()) || minx > maxx || miny > maxy {
        return Err(ApiError::bad_request(format!(
            "bbox {text:?}: need finite numbers with minx <= maxx and miny <= maxy"
        )));
    }
    Ok([*minx, *miny, *maxx, *maxy])
}

/// A page of a layer's features as GeoJSON (WGS 84 lon/lat), with `total`, `limit`, `offset`.
#[utoipa::path(get, path = "/api/portal/datasets/{id}/layers/{layer}/features", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)"), ("layer" = String, Path, description = "Layer name"), FeatureQuery),
    responses((status = 200, description = "GeoJSON FeatureCollection with total, limit, offset", body = Object),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn features(
    State(state): State<AppState>,
    Path((id, layer)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<FeatureQuery>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page(query.limit, query.offset)?;
    let bbox = query.bbox.as_deref().map(parse_bbox).transpose()?;
    let record = find_layer(&state, &id, &layer).await?;
    let engine = state.embedded();
    let page = blocking(move || engine.features(&record, bbox, limit, offset)).await?;
    let features: Vec<Value> = page
        .features
        .iter()
        .map(|text| serde_json::from_str(text).map_err(|e| ApiError::internal(&e)))
        .collect::<Result<_, _>>()?;
    Ok(Json(json!({
        "type": "FeatureCollection",
        "features": features,
        "total": page.total,
        "limit": limit,
        "offset": offset,
    })))
}
