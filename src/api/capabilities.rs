//! `/capabilities`: the registry, one capability, and the SQL a capability compiles to.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use geomill_planner::capabilities::{CapabilityInfo, find, listing, suggest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::{ApiJson, ApiQuery};
use super::planning::{PreviewOptions, single_step_document, sql_text, statements};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/capabilities", get(list))
        .route("/capabilities/{name}", get(one))
        .route(
            "/capabilities/{name}/sql-preview",
            get(preview_get).post(preview_post),
        )
}

fn lookup(name: &str) -> Result<CapabilityInfo, AppError> {
    find(name).map(CapabilityInfo::of).ok_or_else(|| {
        let hint = suggest(name)
            .map(|s| format!(" (did you mean {s:?}?)"))
            .unwrap_or_default();
        AppError::not_found(format!("no capability {name:?}{hint}"))
    })
}

/// A capability as the API shows it: the registry's entry, and `run_engines`, the engines this
/// server offers to run it (every capability runs on every engine the server has: a step an
/// engine has no SQL for runs on the native kernels).
#[derive(serde::Serialize)]
pub struct OfferedCapability {
    #[serde(flatten)]
    info: CapabilityInfo,
    run_engines: Vec<&'static str>,
}

fn offered(state: &AppState, info: CapabilityInfo) -> OfferedCapability {
    OfferedCapability {
        info,
        run_engines: state.offered_engines(),
    }
}

/// Every capability with its JSON Schema.
#[utoipa::path(get, path = "/capabilities", tag = "capabilities",
    responses((status = 200, description = "Every capability: name, description, group, tier, engines (SQL dialects), run_engines (the engines this server offers: `distributed` only with GEOMILL_BALLISTA_URL, `postgis` and `hybrid` only with GEOMILL_POSTGIS_DSN), schema", body = [Object])))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<OfferedCapability>> {
    Json(listing().into_iter().map(|c| offered(&state, c)).collect())
}

/// One capability.
#[utoipa::path(get, path = "/capabilities/{name}", tag = "capabilities",
    params(("name" = String, Path, description = "Capability name")),
    responses((status = 200, body = Object), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn one(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<OfferedCapability>, AppError> {
    lookup(&name).map(|c| Json(offered(&state, c)))
}

/// Query form of a preview: `params` is the capability's parameters as JSON text.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PreviewQuery {
    /// `duckdb` (default) or `postgis`.
    #[param(pattern = "^(duckdb|postgis)$")]
    pub engine: Option<String>,
    /// The parameters as JSON, e.g. `{"distance": 500}`.
    pub params: Option<String>,
    /// A stored dataset whose layer is the step's input: the SQL uses its columns and CRS.
    /// Without it (and for the POST form, without `catalog`), PostGIS SQL names the columns
    /// the step reads and `geom`, standing for the input's columns.
    pub dataset_id: Option<String>,
    /// The dataset's layer (default: its first).
    pub layer: Option<String>,
}

/// Body form of a preview.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewBody {
    /// `duckdb` (default) or `postgis`.
    #[serde(default)]
    pub engine: Option<String>,
    /// The capability's parameters.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub params: Option<Value>,
    /// Schemas of the layers the step reads (`{"sources": {"input": {"columns": [...], "crs": "EPSG:4326"}}}`):
    /// exact column lists, unit conversion and PostGIS SQL need them.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub catalog: Option<Value>,
}

/// The SQL a capability compiles to (parameters in the query string as JSON).
#[utoipa::path(get, path = "/capabilities/{name}/sql-preview", tag = "capabilities",
    params(("name" = String, Path, description = "Capability name"), PreviewQuery),
    responses((status = 200, body = Object),
        (status = 400, description = "`params` is not JSON, or a malformed query string", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn preview_get(
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<PreviewQuery>,
) -> Result<Json<Value>, AppError> {
    let params = match query.params.as_deref() {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| AppError::bad_request(format!("params is not JSON: {e}")))?,
        None => json!({}),
    };
    let catalog = match &query.dataset_id {
        Some(id) => Some(stored_input(&state, &name, &params, id, query.layer.as_deref()).await?),
        None if query.layer.is_some() => {
            return Err(AppError::bad_request("layer needs dataset_id"));
        }
        None => None,
    };
    let input = match (&query.dataset_id, &query.layer) {
        (Some(id), Some(layer)) => Some(format!("{id}/{layer}")),
        _ => None,
    };
    preview(
        &state,
        &name,
        query.engine.as_deref(),
        params,
        catalog,
        input,
    )
}

/// The catalog of a preview reading a stored layer: `input` bound to the dataset's first layer,
/// or `<dataset_id>/<layer>`.
async fn stored_input(
    state: &AppState,
    name: &str,
    params: &Value,
    dataset_id: &str,
    layer: Option<&str>,
) -> Result<Value, AppError> {
    let input = layer.map(|l| format!("{dataset_id}/{l}"));
    let document = single_step_document(name, params.clone(), input.as_deref());
    let vars = geomill_planner::spec::Vars::default();
    let (_, catalog) =
        crate::execute::stored_catalog(state, &document, &vars, Some(dataset_id)).await?;
    serde_json::to_value(catalog).map_err(|e| AppError::internal(&e))
}

/// The SQL a capability compiles to (parameters and optional layer schemas in the body).
#[utoipa::path(post, path = "/capabilities/{name}/sql-preview", tag = "capabilities",
    params(("name" = String, Path, description = "Capability name")),
    request_body = PreviewBody,
    responses((status = 200, body = Object),
        (status = 400, description = "An unknown engine", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn preview_post(
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<PreviewBody>,
) -> Result<Json<Value>, AppError> {
    preview(
        &state,
        &name,
        body.engine.as_deref(),
        body.params.unwrap_or_else(|| json!({})),
        body.catalog,
        None,
    )
}

/// Previews `name` with `params` reading `input` (default `input`). Without a catalog, PostGIS
/// SQL lists a generic schema: the columns the step names, and `geom`.
fn preview(
    state: &AppState,
    name: &str,
    engine: Option<&str>,
    params: Value,
    catalog: Option<Value>,
    input: Option<String>,
) -> Result<Json<Value>, AppError> {
    lookup(name)?;
    let document = single_step_document(name, params, input.as_deref());
    let mut options = PreviewOptions::parse(state, engine, catalog.clone(), None)?;
    if catalog.is_none() && options.dialect() == geomill_planner::sql::Dialect::Postgis {
        options = options.with_generic_catalog(&document)?;
    }
    let preview = options.preview_one(&document)?;
    Ok(Json(json!({
        "capability": name,
        "engine": options.dialect().as_str(),
        "plan": preview.optimized,
        "sql": sql_text(&preview, options.dialect())?,
        "statements": statements(&preview, options.dialect())?,
    })))
}
