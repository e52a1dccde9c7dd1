//! Rules: stored rules (list, create, read, replace, delete), dry-run validation, graph-editor
//! node templates, and the stream of rule evaluations.

use std::convert::Infallible;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};

use super::extract::ApiJson;
use crate::error::AppError;
use crate::rules::{check, nodes, store};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/rules", get(list).post(create))
        .route("/rules/validate", post(validate))
        .route("/rules/convert", post(convert))
        .route("/rules/to-node", post(to_node))
        .route("/rules/from-node", post(from_node))
        .route("/rules/eval-stream", get(eval_stream))
        .route("/rules/{id}", get(read).put(replace).delete(remove))
        .route("/rules/{id}/validate", post(validate_one))
        .route("/rules/{id}/to-node", get(to_node_by_id))
}

/// The example of a rule: a 500 m buffer.
fn rule_example() -> Value {
    json!({"name": "halo", "capability": "buffer", "config": {"distance": 500, "unit": "meters"}})
}

/// The example of a rules file: the rule of [`rule_example`].
fn rules_example() -> Value {
    json!([rule_example()])
}

fn gispulse_example() -> Value {
    json!([{"name": "big", "capability": "filter", "config": {"expression": "pop_est > 1e8"}, "order": 1}])
}

/// The native pipeline a GISPulse rules file (v1) or pipeline (v2) becomes, with a note per step
/// where the answer would change if GISPulse's own semantics (its measuring CRS, ...) were
/// dropped: what `geomill migrate` prints.
#[utoipa::path(post, path = "/rules/convert", tag = "rules",
    request_body(content = Object, description = "A GISPulse rules file (JSON array of {name, capability, config, enabled, order}) or pipeline ({version: 2, steps, ref_layers})", example = gispulse_example),
    responses(
        (status = 200, description = "{pipeline: the native PipelineSpec, notes: [text]}", body = Object),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "Not a GISPulse document, or a step geomill cannot translate (every problem with its path)", body = crate::api::error::ErrorBody),
    ))]
pub async fn convert(ApiJson(body): ApiJson<Value>) -> Result<Json<Value>, AppError> {
    let lowered = geomill_planner::gispulse::migrate(&body)?;
    Ok(Json(
        json!({"pipeline": lowered.pipeline, "notes": lowered.notes}),
    ))
}

/// Validates each rule on its own; answers 200 with `valid` and every problem found.
#[utoipa::path(post, path = "/rules/validate", tag = "rules",
    request_body(content = [Object], description = "An array of rules: {name?, capability, config | params}", example = rules_example),
    responses(
        (status = 200, description = "{valid, results: [{index, name, capability, valid, errors: [{path, message}]}], errors}", body = Object),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "The body is not an array of objects", body = crate::api::error::ErrorBody),
    ))]
pub async fn validate(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Value>, AppError> {
    let Value::Array(rules) = body else {
        return Err(AppError::unprocessable("expected an array of rules"));
    };
    let mut results = Vec::new();
    let mut all_errors = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        let Value::Object(object) = rule else {
            return Err(AppError::unprocessable(format!(
                "[{index}]: expected an object"
            )));
        };
        let mut rule = object.clone();
        rule.entry("name")
            .or_insert_with(|| Value::String(format!("rule_{index}")));
        let errors = check::problems(&rule, &format!("[{index}]."))?;
        check::announce(&state, "validate", &rule, &errors);
        all_errors.extend(errors.iter().cloned());
        results.push(json!({
            "index": index,
            "name": rule.get("name"),
            "capability": object.get("capability"),
            "valid": errors.is_empty(),
            "errors": errors,
        }));
    }
    Ok(Json(
        json!({ "valid": all_errors.is_empty(), "results": results, "errors": all_errors }),
    ))
}

/// Every stored rule, oldest first.
#[utoipa::path(get, path = "/rules", tag = "rules",
    responses((status = 200, description = "{rules: [Rule with id, created_at, updated_at], total}", body = Object)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    let rules: Vec<Value> = state.rules().all().await?.iter().map(store::view).collect();
    Ok(Json(json!({ "total": rules.len(), "rules": rules })))
}

/// Store a rule (`name`, `capability`, `config` or `params`, `scope`, `enabled`). An invalid
/// rule is a 422 listing every problem with its path; a name already taken is a 409.
#[utoipa::path(post, path = "/rules", tag = "rules", request_body(content = Object, description = "A Rule", example = rule_example),
    responses((status = 201, description = "The stored rule with id", body = Object),
        (status = 409, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let rule = store::create(&state, body).await?;
    Ok((StatusCode::CREATED, Json(store::view(&rule))))
}

/// One stored rule.
#[utoipa::path(get, path = "/rules/{id}", tag = "rules",
    responses((status = 200, body = Object), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    Ok(Json(store::view(&state.rules().find(&id).await?)))
}

/// Replace a stored rule (checked like a new one).
#[utoipa::path(put, path = "/rules/{id}", tag = "rules", request_body(content = Object, description = "A Rule", example = rule_example),
    responses((status = 200, body = Object), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody),
        (status = 409, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn replace(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Value>, AppError> {
    Ok(Json(store::view(&store::replace(&state, &id, body).await?)))
}

/// Delete a stored rule; answers `{deleted: id}`.
#[utoipa::path(delete, path = "/rules/{id}", tag = "rules",
    responses((status = 200, body = Object), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    state.rules().delete(&id).await?;
    Ok(Json(json!({ "deleted": id })))
}

/// Validate a stored rule again (its capability may have changed since it was written).
#[utoipa::path(post, path = "/rules/{id}/validate", tag = "rules",
    responses((status = 200, description = "{id, name, capability, valid, errors}", body = Object),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn validate_one(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let record = state.rules().find(&id).await?;
    let rule = store::rule_fields(&record);
    let errors = check::problems(&rule, "")?;
    let mut announced = rule.clone();
    announced.insert("id".into(), json!(record.id));
    check::announce(&state, "validate", &announced, &errors);
    Ok(Json(json!({
        "id": record.id,
        "name": record.name,
        "capability": record.capability,
        "valid": errors.is_empty(),
        "errors": errors,
    })))
}

/// The graph-editor node template of a rule given in the body.
#[utoipa::path(post, path = "/rules/to-node", tag = "rules", request_body(content = Object, description = "A Rule", example = rule_example),
    responses((status = 200, description = "{type, label, description, inputs, outputs, parameters, values, rule}", body = Object),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn to_node(ApiJson(body): ApiJson<Value>) -> Result<Json<Value>, AppError> {
    let Value::Object(rule) = body else {
        return Err(AppError::unprocessable("a rule is a JSON object"));
    };
    Ok(Json(nodes::to_node(&rule, None)?))
}

/// The graph-editor node template of a stored rule.
#[utoipa::path(get, path = "/rules/{id}/to-node", tag = "rules",
    responses((status = 200, body = Object), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn to_node_by_id(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let record = state.rules().find(&id).await?;
    Ok(Json(nodes::to_node(
        &store::rule_fields(&record),
        Some(&record.id),
    )?))
}

/// Store the rule a graph-editor node stands for (checked like any new rule).
#[utoipa::path(post, path = "/rules/from-node", tag = "rules", request_body(content = Object, description = "A node template"),
    responses((status = 201, body = Object), (status = 409, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn from_node(
    State(state): State<AppState>,
    ApiJson(node): ApiJson<Value>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let rule = nodes::from_node(&node)?;
    let stored = store::create(&state, Value::Object(rule)).await?;
    Ok((StatusCode::CREATED, Json(store::view(&stored))))
}

/// Server-sent events of rule evaluations as they happen (validations, writes): each `data` is
/// `{timestamp, source, rule_id, name, capability, valid, errors}`.
#[utoipa::path(get, path = "/rules/eval-stream", tag = "rules",
    responses((status = 200, description = "text/event-stream", content_type = "text/event-stream")))]
pub async fn eval_stream(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events = tokio_stream_of(state.rule_events().subscribe());
    Sse::new(events.map(|event| Ok(Event::default().data(event.to_string()))))
        .keep_alive(KeepAlive::default())
}

/// A broadcast receiver as a stream; a subscriber that falls behind skips what it missed.
fn tokio_stream_of(
    receiver: tokio::sync::broadcast::Receiver<Value>,
) -> impl Stream<Item = Value> + Send + 'static {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(event) => return Some((event, receiver)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}
