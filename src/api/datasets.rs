//! Datasets: list, read, rename, delete, and pages of a layer's features (new datasets come
//! from `super::ingest`).

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::{delete, get};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::{ApiJson, ApiQuery};
use crate::blocking::blocking;
use crate::datasets::loaded_layer::find_layer;
use crate::datasets::lookup::find;
use crate::datasets::model::{Dataset, DatasetPage};
use crate::datasets::upload;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// Largest page of features or datasets.
pub const MAX_LIMIT: i64 = 10_000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/datasets", get(list))
        .route("/datasets/{id}", get(read).patch(rename))
        .route("/api/portal/datasets/{id}", delete(remove))
        .route(
            "/api/portal/datasets/{id}/layers/{layer}/features",
            get(features),
        )
}

/// A page of a stored layer's features in WGS 84 lon/lat: read by PostgreSQL itself in
/// persistent mode (through the GiST index), by the embedded engine otherwise.
pub(crate) async fn lon_lat_page(
    state: &AppState,
    layer: geomill_backends::store::LayerRecord,
    bbox: Option<[f64; 4]>,
    (limit, offset): (i64, i64),
) -> Result<geomill_backends::store::FeaturePage, AppError> {
    if state.store().location().is_postgis()
        && let Some(postgis) = state.postgres_store()
    {
        return postgis
            .stored_features(&layer, bbox, (limit, offset))
            .await
            .map_err(AppError::from);
    }
    let engine = state.store();
    blocking(move || engine.features(&layer, bbox, limit, offset)).await
}

/// A page's features as JSON values (each is GeoJSON text from the engine).
pub(crate) fn page_features(
    page: &geomill_backends::store::FeaturePage,
) -> Result<Vec<Value>, AppError> {
    page.features
        .iter()
        .map(|text| serde_json::from_str(text).map_err(|e| AppError::internal(&e)))
        .collect()
}

/// 409 `read_only` for a dataset holding an example.
async fn refuse_example(state: &AppState, id: &str) -> Result<(), AppError> {
    if crate::examples::is_example(state, id).await? {
        return Err(AppError::new(
            ErrorKind::Conflict,
            "read_only",
            format!("dataset {id} holds an example (GET /examples) and is read-only"),
        ));
    }
    Ok(())
}

/// The stored layer a copy request names (`layer`, default the dataset's first) and the table
/// name it is to get (`name`, default the layer's): 1 to 63 characters, as PostgreSQL allows.
pub(crate) async fn layer_to_copy(
    state: &AppState,
    dataset_id: &str,
    layer: Option<&str>,
    name: Option<&str>,
) -> Result<(geomill_backends::store::LayerRecord, String), AppError> {
    let dataset = find(state, dataset_id).await?;
    let layer_name = layer
        .map(str::to_owned)
        .or_else(|| dataset.layers.first().map(|l| l.name.clone()))
        .ok_or_else(|| AppError::unprocessable("the dataset has no layers"))?;
    let layer = find_layer(state, &dataset.id, &layer_name).await?;
    let table = name.map_or_else(|| layer.name.clone(), str::to_owned);
    if table.is_empty() || table.len() > 63 {
        return Err(AppError::unprocessable(format!(
            "name {table:?}: a table name has 1 to 63 characters"
        )));
    }
    if table.contains('\0') {
        return Err(AppError::unprocessable(format!(
            "name {table:?}: a table name has no NUL character"
        )));
    }
    Ok((layer, table))
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

pub(crate) fn page(limit: Option<i64>, offset: Option<i64>) -> Result<(i64, i64), AppError> {
    let limit = limit.unwrap_or(100);
    let offset = offset.unwrap_or(0);
    if !(0..=MAX_LIMIT).contains(&limit) {
        return Err(AppError::bad_request(format!(
            "limit must be between 0 and {MAX_LIMIT}, got {limit}"
        )));
    }
    if offset < 0 {
        return Err(AppError::bad_request(format!(
            "offset must not be negative, got {offset}"
        )));
    }
    Ok((limit, offset))
}

/// Datasets, newest first (the example datasets are listed by `/examples` only).
#[utoipa::path(get, path = "/datasets", tag = "datasets", params(PageQuery),
    responses((status = 200, body = DatasetPage), (status = 400, body = crate::api::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Json<DatasetPage>, AppError> {
    let (limit, offset) = page(query.limit, query.offset)?;
    let examples = crate::examples::dataset_ids(&state).await?;
    let engine = state.store();
    let (total, records) =
        blocking(move || engine.datasets_except(limit, offset, &examples)).await?;
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
    responses((status = 200, body = Dataset), (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Dataset>, AppError> {
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
    responses((status = 200, body = Dataset), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 409, description = "`read_only`: the dataset holds an example", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn rename(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RenameBody>,
) -> Result<Json<Dataset>, AppError> {
    let name = body.name.trim().to_owned();
    if name.is_empty() || name.len() > 255 {
        return Err(AppError::unprocessable(
            "name must have 1 to 255 characters",
        ));
    }
    find(&state, &id).await?;
    refuse_example(&state, &id).await?;
    let engine = state.store();
    let key = id.clone();
    blocking(move || engine.rename_dataset(&key, &name)).await?;
    Ok(Json(find(&state, &id).await?.into()))
}

/// Delete a dataset: its layers, its catalog rows and its uploaded file.
#[utoipa::path(delete, path = "/api/portal/datasets/{id}", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)")),
    responses((status = 200, description = "{deleted: id}", body = Object), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 409, description = "`read_only`: the dataset holds an example", body = crate::api::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let dataset = find(&state, &id).await?;
    refuse_example(&state, &id).await?;
    crate::triggers::tracking::record_deleting(&state, &dataset).await;
    let engine = state.store();
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

pub(crate) fn parse_bbox(text: &str) -> Result<[f64; 4], AppError> {
    let numbers: Vec<f64> = text
        .split(',')
        .map(|part| part.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            AppError::bad_request(format!(
                "bbox {text:?} is not four numbers minx,miny,maxx,maxy"
            ))
        })?;
    let [minx, miny, maxx, maxy] = numbers.as_slice() else {
        return Err(AppError::bad_request(format!(
            "bbox {text:?} is not four numbers minx,miny,maxx,maxy"
        )));
    };
    // minx > maxx is a box crossing the antimeridian (OGC API Features), in longitudes only.
    let crosses_antimeridian =
        minx > maxx && (-180.0..=180.0).contains(minx) && (-180.0..=180.0).contains(maxx);
    if numbers.iter().any(|n| !n.is_finite())
        || (minx > maxx && !crosses_antimeridian)
        || miny > maxy
    {
        return Err(AppError::bad_request(format!(
            "bbox {text:?}: need finite numbers with minx <= maxx (or longitudes with minx > maxx \
             for a box crossing the antimeridian) and miny <= maxy"
        )));
    }
    Ok([*minx, *miny, *maxx, *maxy])
}

/// A page of a layer's features as GeoJSON (WGS 84 lon/lat), with `total`, `limit`, `offset`.
#[utoipa::path(get, path = "/api/portal/datasets/{id}/layers/{layer}/features", tag = "datasets",
    params(("id" = String, Path, description = "Dataset id (UUID)"), ("layer" = String, Path, description = "Layer name"), FeatureQuery),
    responses((status = 200, description = "GeoJSON FeatureCollection with total, limit, offset", body = Object),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn features(
    State(state): State<AppState>,
    Path((id, layer)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<FeatureQuery>,
) -> Result<Json<Value>, AppError> {
    let (limit, offset) = page(query.limit, query.offset)?;
    let bbox = query.bbox.as_deref().map(parse_bbox).transpose()?;
    let record = find_layer(&state, &id, &layer).await?;
    let page = lon_lat_page(&state, record, bbox, (limit, offset)).await?;
    let features = page_features(&page)?;
    Ok(Json(json!({
        "type": "FeatureCollection",
        "features": features,
        "total": page.total,
        "limit": limit,
        "offset": offset,
    })))
}
