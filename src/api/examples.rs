//! Example datasets (`crate::examples`): list, detail, a preview of features, vector tiles, and
//! a dry run of a trigger watching an example's layer. All read-only.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::datasets::lon_lat_page;
use super::extract::{ApiJson, ApiQuery};
use crate::blocking::blocking;
use crate::datasets::model::Dataset;
use crate::error::AppError;
use crate::examples::{self, Example};
use crate::state::AppState;

/// Largest preview.
const MAX_PREVIEW: i64 = 1000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/examples", get(list))
        .route("/examples/{id}", get(read))
        .route("/examples/{id}/preview", get(preview))
        .route("/examples/{id}/tiles/{z}/{x}/{y}", get(tile))
        .route("/examples/{id}/triggers/dryrun", post(dryrun))
}

/// An example dataset.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ExampleDataset {
    /// Stable id: the file name without its extension.
    pub id: String,
    /// The file it was loaded from.
    pub file: String,
    /// Always true: dataset routes refuse to rename or delete it.
    pub read_only: bool,
    /// The stored dataset (its id is what trigger predicates and pipelines name it by).
    pub dataset: Dataset,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ExampleList {
    pub examples: Vec<ExampleDataset>,
}

fn view(example: Example, dataset: geomill_backends::store::DatasetRecord) -> ExampleDataset {
    ExampleDataset {
        id: example.id,
        file: example.file,
        read_only: true,
        dataset: dataset.into(),
    }
}

/// The example datasets (empty without `GEOMILL_EXAMPLES_DIR`).
#[utoipa::path(get, path = "/examples", tag = "datasets",
    responses((status = 200, body = ExampleList)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<ExampleList>, AppError> {
    let mut found = Vec::new();
    for example in examples::all(&state).await? {
        found.push(examples::find(&state, &example.id).await?);
    }
    Ok(Json(ExampleList {
        examples: found.into_iter().map(|(e, d)| view(e, d)).collect(),
    }))
}

/// One example dataset.
#[utoipa::path(get, path = "/examples/{id}", tag = "datasets",
    params(("id" = String, Path, description = "Example id")),
    responses((status = 200, body = ExampleDataset), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ExampleDataset>, AppError> {
    let (example, dataset) = examples::find(&state, &id).await?;
    Ok(Json(view(example, dataset)))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PreviewQuery {
    /// Features (default 10, at most 1000).
    #[param(minimum = 0, maximum = 1000)]
    pub limit: Option<i64>,
    /// Layer (default the example's first).
    pub layer: Option<String>,
}

/// A layer of an example: the named one or its first; 404 naming the layers otherwise.
async fn example_layer(
    state: &AppState,
    id: &str,
    layer: Option<&str>,
) -> Result<geomill_backends::store::LayerRecord, AppError> {
    let (_, dataset) = examples::find(state, id).await?;
    let found = match layer {
        Some(name) => dataset.layers.iter().find(|l| l.name == name),
        None => dataset.layers.first(),
    };
    found.cloned().ok_or_else(|| {
        let known: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
        AppError::not_found(format!(
            "example {id} has no layer {:?} (layers: {})",
            layer.unwrap_or_default(),
            known.join(", ")
        ))
    })
}

/// The first features of a layer as a GeoJSON FeatureCollection (WGS 84 lon/lat) with the
/// layer's `total` and the `limit` applied.
#[utoipa::path(get, path = "/examples/{id}/preview", tag = "datasets",
    params(("id" = String, Path, description = "Example id"), PreviewQuery),
    responses((status = 200, description = "GeoJSON FeatureCollection with layer, total, limit", body = Object),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn preview(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<PreviewQuery>,
) -> Result<Json<Value>, AppError> {
    let limit = query.limit.unwrap_or(10);
    if !(0..=MAX_PREVIEW).contains(&limit) {
        return Err(AppError::bad_request(format!(
            "limit must be between 0 and {MAX_PREVIEW}, got {limit}"
        )));
    }
    let layer = example_layer(&state, &id, query.layer.as_deref()).await?;
    let name = layer.name.clone();
    let page = lon_lat_page(&state, layer, None, (limit, 0)).await?;
    let features = crate::api::datasets::page_features(&page)?;
    Ok(Json(json!({
        "type": "FeatureCollection",
        "features": features,
        "layer": name,
        "total": page.total,
        "limit": limit,
    })))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TileQuery {
    /// Layer (default the example's first).
    pub layer: Option<String>,
}

/// Tile z/x/y (`{y}.mvt`) of a layer as a Mapbox Vector Tile in Web Mercator, one layer named
/// after the example's layer; 204 when no feature touches it, 400 outside the tile matrix.
#[utoipa::path(get, path = "/examples/{id}/tiles/{z}/{x}/{y}.mvt", tag = "datasets",
    params(("id" = String, Path, description = "Example id"), ("z" = u32, Path, description = "Zoom (0 to 22)"),
        ("x" = u32, Path, description = "Column"), ("y" = u32, Path, description = "Row"), TileQuery),
    responses((status = 200, description = "A Mapbox Vector Tile", content_type = "application/vnd.mapbox-vector-tile"),
        (status = 204, description = "Empty tile"),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn tile(
    State(state): State<AppState>,
    Path((id, z, x, y)): Path<(String, String, String, String)>,
    ApiQuery(query): ApiQuery<TileQuery>,
) -> Result<Response, AppError> {
    let zxy = super::ogc::tiles::tile_index(&z, &x, &y, "mvt")?;
    let layer = example_layer(&state, &id, query.layer.as_deref()).await?;
    let engine = state.store();
    let name = layer.name.clone();
    let bytes = blocking(move || engine.tile(&layer, &name, zxy)).await?;
    if bytes.is_empty() {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok((
        [(header::CONTENT_TYPE, "application/vnd.mapbox-vector-tile")],
        bytes,
    )
        .into_response())
}

fn dryrun_example() -> Value {
    json!({"name": "countries near a point", "event": "FEATURE_CREATED", "trigger_type": "DML",
        "layer": "naturalearth_lowres",
        "predicates": [{"type": "geom", "op": "intersects", "ref_table": "<dataset id>/<layer>"}],
        "actions": [{"action_type": "NOTIFY", "config": {"message": "hit"}}]})
}

/// Dry run of a trigger on an example: the body is a trigger as `POST /triggers` takes it,
/// watching the example's layer (`layer`, default its first; `dataset_id` and `table` are set
/// to the example's). Every feature of the layer (at most 10,000) is taken as inserted and
/// evaluated against the predicates; the answer says which match, whether the trigger would
/// fire and what each action would do. Nothing is stored, published or sent.
#[utoipa::path(post, path = "/examples/{id}/triggers/dryrun", tag = "datasets",
    params(("id" = String, Path, description = "Example id")),
    request_body(content = Object, description = "A trigger document (see POST /triggers)", example = dryrun_example),
    responses((status = 200, description = "{dataset_id, layer, table, event, would_fire, total, matched_count, matched, rows: [{fid, matches, predicates}], truncated, actions}", body = Object),
        (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "An invalid trigger (`detail.errors` names each field)", body = crate::api::error::ErrorBody)))]
pub async fn dryrun(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Value>, AppError> {
    let (example, dataset) = examples::find(&state, &id).await?;
    let Value::Object(mut fields) = body else {
        return Err(AppError::unprocessable(
            "the body must be a JSON object: a trigger document",
        ));
    };
    fields.insert("dataset_id".into(), json!(dataset.id));
    fields.remove("table");
    let mut answer = super::trigger_runs::dry_run_layer(&state, &Value::Object(fields)).await?;
    answer["example"] = json!(example.id);
    Ok(Json(answer))
}
