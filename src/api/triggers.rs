//! `/triggers` (Pro): stored triggers (create, list, read, replace, delete, toggle), dry-run
//! validation, and the operations attached to a trigger.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};

use super::extract::ApiJson;
use crate::error::AppError;
use crate::state::AppState;
use crate::triggers::model::{Operation, parse_operation};
use crate::triggers::secrets;
use crate::triggers::store::{self, Trigger, check, invalid};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/triggers", get(list).post(create))
        .route("/triggers/validate", post(validate))
        .route("/triggers/{id}", get(read).put(replace).delete(remove))
        .route("/triggers/{id}/toggle", post(toggle))
        .route(
            "/triggers/{id}/operations",
            get(operations).post(add_operation),
        )
        .route(
            "/triggers/{id}/operations/{op_id}",
            put(replace_operation).delete(remove_operation),
        )
}

/// The example of a trigger: notify when a feature is created inside a zone.
pub(crate) fn trigger_example() -> Value {
    json!({"name": "site in zone", "event": "FEATURE_CREATED", "trigger_type": "DML",
           "table": "public.sites",
           "predicates": [{"type": "geom", "op": "intersects", "ref_table": "public.zones"}],
           "actions": [{"action_type": "NOTIFY", "config": {"message": "a site was added in a zone"}}],
           "enabled": true})
}

/// Every trigger.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TriggerList {
    pub triggers: Vec<Trigger>,
    pub total: usize,
}

/// Create a trigger. It watches `dataset_id` (+ `layer`) or a PostgreSQL `table` (whose
/// change tracking is installed if missing).
#[utoipa::path(post, path = "/triggers", tag = "triggers",
    request_body(content = Object, description = "A Trigger", example = trigger_example),
    responses((status = 201, body = Trigger), (status = 415, body = crate::api::error::ErrorBody),
        (status = 422, description = "Invalid: detail.errors lists every problem with its field path", body = crate::api::error::ErrorBody),
        (status = 503, description = "The watched PostgreSQL table cannot be reached", body = crate::api::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<Trigger>), AppError> {
    let mut spec = check(&state, &body).await.map_err(|p| invalid(&p))?;
    secrets::keep_stored(&mut spec, None).map_err(|p| invalid(&p))?;
    crate::triggers::tracking::ensure_table_tracked(&state, &spec).await?;
    let now = crate::timestamp::now();
    let trigger = Trigger {
        id: uuid::Uuid::new_v4().to_string(),
        spec,
        created_at: now.clone(),
        updated_at: now,
    };
    Ok((
        StatusCode::CREATED,
        Json(store::save(&state, trigger).await?),
    ))
}

/// List the triggers, oldest first.
#[utoipa::path(get, path = "/triggers", tag = "triggers", responses((status = 200, body = TriggerList)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<TriggerList>, AppError> {
    let triggers = store::all(&state).await?;
    Ok(Json(TriggerList {
        total: triggers.len(),
        triggers,
    }))
}

/// One trigger.
#[utoipa::path(get, path = "/triggers/{id}", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id")),
    responses((status = 200, body = Trigger), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Trigger>, AppError> {
    Ok(Json(store::load(&state, &id).await?))
}

/// Replace a trigger (its operations stay unless the body gives them; an action's secret
/// stays when the body leaves it out or sends `***`).
#[utoipa::path(put, path = "/triggers/{id}", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id")),
    request_body(content = Object, description = "A Trigger", example = trigger_example),
    responses((status = 200, body = Trigger), (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody),
        (status = 503, description = "The watched PostgreSQL table cannot be reached", body = crate::api::error::ErrorBody)))]
pub async fn replace(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Trigger>, AppError> {
    let mut trigger = store::load(&state, &id).await?;
    let mut spec = check(&state, &body).await.map_err(|p| invalid(&p))?;
    secrets::keep_stored(&mut spec, Some(&trigger.spec)).map_err(|p| invalid(&p))?;
    crate::triggers::tracking::ensure_table_tracked(&state, &spec).await?;
    if body.get("operations").is_none() {
        spec.operations = std::mem::take(&mut trigger.spec.operations);
    }
    trigger.spec = spec;
    trigger.updated_at = crate::timestamp::now();
    Ok(Json(store::save(&state, trigger).await?))
}

/// Delete a trigger.
#[utoipa::path(delete, path = "/triggers/{id}", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id")),
    responses((status = 200, description = "{deleted: id}", body = Object), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    store::delete(&state, &id).await?;
    Ok(Json(json!({ "deleted": id })))
}

/// Enable a disabled trigger, or disable an enabled one.
#[utoipa::path(post, path = "/triggers/{id}/toggle", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id")),
    responses((status = 200, body = Trigger), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn toggle(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Trigger>, AppError> {
    let mut trigger = store::load(&state, &id).await?;
    trigger.spec.enabled = !trigger.spec.enabled;
    trigger.updated_at = crate::timestamp::now();
    Ok(Json(store::save(&state, trigger).await?))
}

/// Check a trigger without storing it: 200 with `valid` and every problem.
#[utoipa::path(post, path = "/triggers/validate", tag = "triggers",
    request_body(content = Object, description = "A Trigger", example = trigger_example),
    responses((status = 200, description = "{valid, errors: [{path, message}], trigger}", body = Object),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, description = "The body is not JSON", body = crate::api::error::ErrorBody)))]
pub async fn validate(State(state): State<AppState>, ApiJson(body): ApiJson<Value>) -> Json<Value> {
    let answer = match check(&state, &body).await {
        Ok(spec) => json!({"valid": true, "errors": [], "trigger": secrets::masked(&spec)}),
        Err(problems) => json!({"valid": false, "errors": problems, "trigger": null}),
    };
    crate::triggers::fire::announce(
        &state,
        &json!({"timestamp": crate::timestamp::now(), "source": "validate", "name": body.get("name"),
                "valid": answer["valid"], "errors": answer["errors"]}),
    );
    Json(answer)
}

/// The operations of a trigger, in order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OperationList {
    pub trigger_id: String,
    pub operations: Vec<Operation>,
}

/// The operations attached to a trigger, by ascending `order`.
#[utoipa::path(get, path = "/triggers/{id}/operations", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id")),
    responses((status = 200, body = OperationList), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn operations(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<OperationList>, AppError> {
    let trigger = store::load(&state, &id).await?;
    Ok(Json(OperationList {
        trigger_id: trigger.id,
        operations: trigger.spec.operations,
    }))
}

fn operation_example() -> Value {
    json!({"operation_type": "BEFORE", "capability": "buffer", "params": {"distance": 100, "unit": "meters"}, "order": 1})
}

fn sorted(mut operations: Vec<Operation>) -> Vec<Operation> {
    operations.sort_by_key(|o| o.order);
    operations
}

/// Attach an operation (`operation_type` BEFORE, a capability, its params, `order`; default:
/// after the last).
#[utoipa::path(post, path = "/triggers/{id}/operations", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id")),
    request_body(content = Object, description = "A trigger operation", example = operation_example),
    responses((status = 201, body = Operation), (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, description = "Unknown capability or invalid params (detail.errors)", body = crate::api::error::ErrorBody)))]
pub async fn add_operation(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<Operation>), AppError> {
    let mut trigger = store::load(&state, &id).await?;
    let next = trigger
        .spec
        .operations
        .iter()
        .map(|o| o.order)
        .max()
        .unwrap_or(0)
        + 1;
    let operation =
        parse_operation(&body, uuid::Uuid::new_v4().to_string(), next).map_err(|p| invalid(&p))?;
    trigger.spec.operations.push(operation.clone());
    trigger.spec.operations = sorted(std::mem::take(&mut trigger.spec.operations));
    trigger.updated_at = crate::timestamp::now();
    store::save(&state, trigger).await?;
    Ok((StatusCode::CREATED, Json(operation)))
}

/// Replace an operation of a trigger.
#[utoipa::path(put, path = "/triggers/{id}/operations/{op_id}", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id"), ("op_id" = String, Path, description = "Operation id")),
    request_body(content = Object, description = "A trigger operation", example = operation_example),
    responses((status = 200, body = Operation), (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn replace_operation(
    State(state): State<AppState>,
    Path((id, op_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Operation>, AppError> {
    let mut trigger = store::load(&state, &id).await?;
    let position = trigger
        .spec
        .operations
        .iter()
        .position(|o| o.id == op_id)
        .ok_or_else(|| AppError::not_found(format!("trigger {id} has no operation {op_id}")))?;
    let order = trigger.spec.operations[position].order;
    let operation = parse_operation(&body, op_id, order).map_err(|p| invalid(&p))?;
    trigger.spec.operations[position] = operation.clone();
    trigger.spec.operations = sorted(std::mem::take(&mut trigger.spec.operations));
    trigger.updated_at = crate::timestamp::now();
    store::save(&state, trigger).await?;
    Ok(Json(operation))
}

/// Remove an operation from a trigger.
#[utoipa::path(delete, path = "/triggers/{id}/operations/{op_id}", tag = "triggers",
    params(("id" = String, Path, description = "Trigger id"), ("op_id" = String, Path, description = "Operation id")),
    responses((status = 200, description = "{deleted: op_id}", body = Object), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn remove_operation(
    State(state): State<AppState>,
    Path((id, op_id)): Path<(String, String)>,
) -> Result<Json<Value>, AppError> {
    let mut trigger = store::load(&state, &id).await?;
    let before = trigger.spec.operations.len();
    trigger.spec.operations.retain(|o| o.id != op_id);
    if trigger.spec.operations.len() == before {
        return Err(AppError::not_found(format!(
            "trigger {id} has no operation {op_id}"
        )));
    }
    trigger.updated_at = crate::timestamp::now();
    store::save(&state, trigger).await?;
    Ok(Json(json!({ "deleted": op_id })))
}
