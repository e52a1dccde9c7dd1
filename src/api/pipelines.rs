//! Pipelines v2 planning: `/api/pipelines/validate` (and `/pipelines/validate`) and
//! `/api/pipelines/preview` (plan and SQL per engine, without touching a database).

use std::collections::BTreeMap;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use geomill_planner::plan_document;
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::ApiJson;
use super::planning::{PreviewOptions, preview_json, validation_json};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/pipelines/validate", post(validate))
        .route("/pipelines/validate", post(validate))
        .route("/api/pipelines/preview", post(preview))
        .route("/api/pipelines/execute", post(execute))
        .route("/pipelines/execute", post(execute))
        .route("/pipelines/execute-steps", post(execute_steps))
        .route("/api/pipelines/examples", get(examples))
        .route("/pipelines/examples", get(examples))
}

/// A request that wraps the document with planning options; a bare document is also accepted.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped {
    pipeline: Value,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    vars: Option<BTreeMap<String, String>>,
    #[serde(default)]
    catalog: Option<Value>,
}

/// The example of the request bodies: populous countries of a dataset named `world.gpkg` (the
/// Natural Earth data of the tests), buffered 500 m.
pub(crate) fn pipeline_example() -> Value {
    json!({"name": "populous", "steps": [
        {"id": "big", "capability": "filter", "input": "world.gpkg/countries",
         "params": {"where": "pop_est > 50000000"}},
        {"id": "halo", "capability": "buffer", "input": "big",
         "params": {"distance": 500, "unit": "meters"}}
    ]})
}

/// The document of a request and how to plan it.
fn planning_request(state: &AppState, body: Value) -> Result<(Value, PreviewOptions), AppError> {
    let request = if body.get("pipeline").is_some() {
        serde_json::from_value(body).map_err(|e| AppError::unprocessable(e.to_string()))?
    } else {
        Wrapped {
            pipeline: body,
            engine: None,
            vars: None,
            catalog: None,
        }
    };
    let options = PreviewOptions::parse(
        state,
        request.engine.as_deref(),
        request.catalog,
        request.vars,
    )?;
    Ok((request.pipeline, options))
}

/// Dry run: structure, capabilities, parameters, step references, cycles, expressions.
#[utoipa::path(post, path = "/api/pipelines/validate", tag = "pipelines",
    request_body(content = Object, description = "A PipelineSpec (or a rules file, a scenario), bare or as {pipeline, engine, vars, catalog}", example = pipeline_example),
    responses((status = 200, description = "{valid, steps, errors: [{path, message}]}", body = Object),
        (status = 400, description = "An unknown engine", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "The body is not JSON, or not a pipeline request", body = crate::api::error::ErrorBody)))]
pub async fn validate(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Value>, AppError> {
    let (pipeline, options) = planning_request(&state, body)?;
    let steps = pipeline
        .get("steps")
        .and_then(Value::as_array)
        .map_or_else(|| pipeline.as_array().map_or(0, Vec::len), Vec::len);
    let outcome = plan_document(&pipeline, options.catalog(), options.vars()).map(|_| steps);
    let mut answer = validation_json(&outcome)?;
    if let Ok(previews) = options.preview(&pipeline) {
        answer["plan"] = json!(
            previews
                .iter()
                .map(|p| p.plan.clone())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    Ok(Json(answer))
}

/// The logical plan before and after optimisation, and the SQL of every step in both dialects.
#[utoipa::path(post, path = "/api/pipelines/preview", tag = "pipelines",
    request_body(content = Object, description = "A PipelineSpec, bare or as {pipeline, engine, vars, catalog}", example = pipeline_example),
    responses(
        (status = 200, description = "{plan, optimized, sql: {duckdb: {statements, text, result}, postgis: {...} | {error}}}; scenarios: {jobs: [...]}", body = Object),
        (status = 400, description = "An unknown engine", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody),
    ))]
pub async fn preview(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Value>, AppError> {
    let (pipeline, options) = planning_request(&state, body)?;
    let previews = options.preview(&pipeline)?;
    match previews.as_slice() {
        [one] if one.job.is_empty() => Ok(Json(preview_json(one))),
        many => Ok(Json(json!({
            "jobs": many.iter().map(|p| {
                let mut value = preview_json(p);
                value["job"] = json!(p.job);
                value
            }).collect::<Vec<_>>()
        }))),
    }
}

/// A run request: the pipeline with the dataset `input` stands for and run variables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecuteBody {
    pipeline: Value,
    #[serde(default)]
    dataset_id: Option<String>,
    #[serde(default)]
    vars: Option<BTreeMap<String, String>>,
    /// `embedded`, `native`, `postgis` or `hybrid` (default: the server's engine).
    #[serde(default)]
    engine: Option<geomill_planner::optimizer::EngineMode>,
}

/// Run a pipeline and answer when it is done: on the embedded engine, or on PostGIS with
/// `engine: "postgis"`.
#[utoipa::path(post, path = "/api/pipelines/execute", tag = "pipelines",
    request_body(content = Object, description = "A PipelineSpec, bare or as {pipeline, dataset_id, vars, engine}; sources name layers of dataset_id, dataset ids or names, or <dataset>/<layer>", example = pipeline_example),
    responses(
        (status = 200, body = crate::execute::Execution),
        (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 503, description = "engine postgis and PostgreSQL unreachable", body = crate::api::error::ErrorBody),
        (status = 504, description = "The run took longer than GEOMILL_JOB_TIMEOUT_S and was stopped (code run_timeout)", body = crate::api::error::ErrorBody),
        (status = 422, description = "Invalid pipeline (more than 100 steps among other problems), unknown sources, or a failed run (detail.status FAILED)", body = crate::api::error::ErrorBody),
    ))]
pub async fn execute(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<crate::execute::Execution>, AppError> {
    let time_out = std::time::Duration::from_secs(state.config().job_timeout_s);
    crate::execute::run_within(&state, run_request(&state, body, false)?, time_out)
        .await
        .map(Json)
}

/// Run the plan as lowered, one statement per operator, and report the rows of each (for
/// debugging a pipeline); the rest as `/api/pipelines/execute`.
#[utoipa::path(post, path = "/pipelines/execute-steps", tag = "pipelines",
    request_body(content = Object, description = "As /api/pipelines/execute", example = pipeline_example),
    responses((status = 200, description = "The execution with `statements`: [{steps, relation, rows, sql}]", body = crate::execute::Execution),
        (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "Invalid pipeline, unknown sources, or a failed run (detail.status FAILED)", body = crate::api::error::ErrorBody),
        (status = 503, description = "engine postgis and PostgreSQL unreachable", body = crate::api::error::ErrorBody),
        (status = 504, description = "The run took longer than GEOMILL_JOB_TIMEOUT_S and was stopped (code run_timeout)", body = crate::api::error::ErrorBody)))]
pub async fn execute_steps(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<crate::execute::Execution>, AppError> {
    let time_out = std::time::Duration::from_secs(state.config().job_timeout_s);
    crate::execute::run_within(&state, run_request(&state, body, true)?, time_out)
        .await
        .map(Json)
}

fn run_request(
    state: &AppState,
    body: Value,
    step_by_step: bool,
) -> Result<crate::execute::RunRequest, AppError> {
    // Step-by-step runs are the embedded engine's; others default to the server's engine.
    let default_engine = if step_by_step {
        geomill_planner::optimizer::EngineMode::Embedded
    } else {
        state.default_run_engine()
    };
    let request = if body.get("pipeline").is_some() {
        let body: ExecuteBody =
            serde_json::from_value(body).map_err(|e| AppError::unprocessable(e.to_string()))?;
        crate::execute::RunRequest {
            document: body.pipeline,
            dataset_id: body.dataset_id,
            vars: body.vars.unwrap_or_default(),
            engine: body.engine.unwrap_or(default_engine),
            ..Default::default()
        }
    } else {
        crate::execute::RunRequest {
            document: body,
            engine: default_engine,
            ..Default::default()
        }
    };
    Ok(crate::execute::RunRequest {
        step_by_step,
        ..request
    })
}

/// Example pipelines over layers named `countries`, `cities` and `boroughs` (the Natural Earth
/// and NYC datasets of the test data).
#[utoipa::path(get, path = "/api/pipelines/examples", tag = "pipelines",
    responses((status = 200, description = "[{name, description, pipeline}]", body = [Object])))]
pub async fn examples() -> Json<Value> {
    let examples: Vec<Value> = EXAMPLES
        .iter()
        .map(|(name, description, text)| {
            json!({"name": name, "description": description, "pipeline": serde_json::from_str::<Value>(text).unwrap_or(Value::Null)})
        })
        .collect();
    Json(json!(examples))
}

/// (name, description, PipelineSpec), shared with the golden tests so they stay valid.
const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "cities_near_big_countries",
        "Countries over 50 million people, buffered 500 m, cities joined to them, counted per country, exported as GeoPackage",
        include_str!("../../golden/pipelines/issue_pipeline/pipeline.json"),
    ),
    (
        "clip_to_africa",
        "Cities clipped to the African countries",
        include_str!("../../golden/pipelines/clip_to_africa/pipeline.json"),
    ),
    (
        "size_classes",
        "Countries classed by population with CASE WHEN, and a label from the first non-null of two fields",
        include_str!("../../golden/pipelines/case_when_and_coalesce/pipeline.json"),
    ),
    (
        "boroughs_near_a_box",
        "NYC boroughs buffered 1000 ft and kept where they meet a box (the box pre-filters below the buffer)",
        include_str!("../../golden/pipelines/bbox_prefilter_below_buffer/pipeline.json"),
    ),
];
