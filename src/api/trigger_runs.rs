//! Running triggers without data changing: `POST /triggers/test` (a dry-run firing: what would
//! fire and what each action would do, nothing sent), `POST /triggers/evaluate` (predicates
//! against given geometries or a layer's rows), and `GET /triggers/eval-stream` (SSE of every
//! evaluation as it happens).

use std::convert::Infallible;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::ApiJson;
use crate::error::AppError;
use crate::state::AppState;
use crate::triggers::fire::{Change, ChangeOp, ChangedFeature, announce, evaluate_row};
use crate::triggers::store::{self, Trigger, check, invalid};
use crate::triggers::{actions, tracking};

/// Rows of a layer evaluated at most.
const MAX_LAYER_ROWS: usize = 10_000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/triggers/test", post(test))
        .route("/triggers/evaluate", post(evaluate))
        .route("/triggers/eval-stream", get(eval_stream))
}

/// What `test` and `evaluate` take.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TriggerRun {
    /// A stored trigger...
    pub trigger_id: Option<String>,
    /// ...or a trigger document (checked as `POST /triggers` would).
    #[schema(value_type = Option<Object>)]
    pub trigger: Option<Value>,
    /// `INSERT` (default), `UPDATE` or `DELETE` (test only).
    pub op: Option<String>,
    /// One GeoJSON geometry (longitude/latitude, EPSG:4326).
    #[schema(value_type = Option<Object>)]
    pub geometry: Option<Value>,
    /// One GeoJSON Feature.
    #[schema(value_type = Option<Object>)]
    pub feature: Option<Value>,
    /// GeoJSON Features (or geometries).
    #[schema(value_type = Option<Vec<Object>>)]
    pub features: Option<Vec<Value>>,
    /// Evaluate the rows of this stored layer (evaluate only).
    pub dataset_id: Option<String>,
    pub layer: Option<String>,
}

async fn trigger_of(state: &AppState, run: &TriggerRun) -> Result<Trigger, AppError> {
    match (&run.trigger_id, &run.trigger) {
        (Some(id), None) => store::load(state, id).await,
        (None, Some(body)) => unsaved(state, body).await,
        _ => Err(AppError::unprocessable(
            "give exactly one of trigger_id or trigger",
        )),
    }
}

/// A trigger document checked as `POST /triggers` would, not stored.
async fn unsaved(state: &AppState, body: &Value) -> Result<Trigger, AppError> {
    let spec = check(state, body).await.map_err(|p| invalid(&p))?;
    let now = crate::timestamp::now();
    Ok(Trigger {
        id: String::new(),
        spec,
        created_at: now.clone(),
        updated_at: now,
    })
}

/// Dry run of a trigger document over every row of the stored layer it watches (at most
/// 10,000), each row taken as inserted: which rows pass the predicates, whether the trigger
/// would fire and what each action would do. Nothing is stored, published or sent.
pub(crate) async fn dry_run_layer(state: &AppState, body: &Value) -> Result<Value, AppError> {
    let trigger = unsaved(state, body).await?;
    let (Some(dataset_id), Some(layer)) = (&trigger.spec.dataset_id, &trigger.spec.layer) else {
        return Err(AppError::unprocessable(
            "the trigger must watch a stored layer (dataset_id, layer)",
        ));
    };
    let record = crate::datasets::loaded_layer::find_layer(state, dataset_id, layer).await?;
    let mut rows = tracking::layer_rows(state, &record.table_name).await?;
    let total = rows.len();
    rows.truncate(MAX_LAYER_ROWS);
    let (matched, results) = evaluate_rows(state, &trigger, &rows).await?;
    let op = ChangeOp::Insert;
    let event_matches = op.matches(&trigger.spec.event);
    let would_fire = trigger.spec.enabled && event_matches && !matched.is_empty();
    let change = Change {
        dataset_id: trigger.spec.dataset_id.clone(),
        layer: trigger.spec.layer.clone(),
        table: trigger.spec.table.clone(),
        op,
        rows,
    };
    let done = if would_fire {
        actions::run(state, &trigger, &change, &matched, true).await
    } else {
        Vec::new()
    };
    Ok(
        json!({"name": trigger.spec.name, "dataset_id": dataset_id, "layer": layer,
        "table": trigger.spec.table, "event": trigger.spec.event, "op": op.as_str(),
        "enabled": trigger.spec.enabled, "event_matches": event_matches, "total": total,
        "truncated": total > MAX_LAYER_ROWS, "matched_count": matched.len(), "matched": matched,
        "would_fire": would_fire, "rows": results, "operations": trigger.spec.operations,
        "actions": done}),
    )
}

/// The rows the request gives as GeoJSON: `geometry`, `feature` or `features`.
async fn given_rows(
    state: &AppState,
    run: &TriggerRun,
) -> Result<Option<Vec<ChangedFeature>>, AppError> {
    let items: Vec<Value> = match (&run.geometry, &run.feature, &run.features) {
        (None, None, None) => return Ok(None),
        (Some(g), None, None) => vec![g.clone()],
        (None, Some(f), None) => vec![f.clone()],
        (None, None, Some(fs)) => fs.clone(),
        _ => {
            return Err(AppError::unprocessable(
                "give one of geometry, feature or features",
            ));
        }
    };
    let mut rows = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let (fid, geometry) = if item.get("type").and_then(Value::as_str) == Some("Feature") {
            let fid = match item.get("id") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => i.to_string(),
            };
            (fid, item.get("geometry").cloned().unwrap_or(Value::Null))
        } else {
            (i.to_string(), item)
        };
        let wkb = if geometry.is_null() {
            None
        } else {
            let engine = state.store();
            let text = geometry.to_string();
            let converted = tokio::task::spawn_blocking(move || engine.geojson_wkb(&text))
                .await
                .map_err(|e| AppError::internal(&e))?;
            Some(converted.map_err(|_| {
                AppError::unprocessable(format!("features[{i}]: not a GeoJSON geometry"))
            })?)
        };
        rows.push(ChangedFeature {
            fid: Some(fid),
            wkb,
            srid: Some(4326),
        });
    }
    Ok(Some(rows))
}

/// Rows with outcomes, and the fids of those that match.
async fn evaluate_rows(
    state: &AppState,
    trigger: &Trigger,
    rows: &[ChangedFeature],
) -> Result<(Vec<Option<String>>, Vec<Value>), AppError> {
    let mut matched = Vec::new();
    let mut results = Vec::new();
    for row in rows {
        let (passes, predicates) = evaluate_row(state, trigger, row).await?;
        if passes {
            matched.push(row.fid.clone());
        }
        results.push(json!({"fid": row.fid, "matches": passes, "predicates": predicates}));
    }
    Ok((matched, results))
}

fn run_example() -> Value {
    json!({"trigger_id": "3f0c...", "op": "INSERT", "geometry": {"type": "Point", "coordinates": [2.35, 48.85]}})
}

/// Dry-run firing: whether the trigger would fire for the given rows (or for any row, when
/// none is given) and what each action would do. Nothing is published, sent or submitted.
#[utoipa::path(post, path = "/triggers/test", tag = "triggers",
    request_body(content = TriggerRun, example = run_example),
    responses((status = 200, description = "{trigger_id, table, event, op, event_matches, would_fire, matched, rows, actions}", body = Object),
        (status = 404, description = "Unknown trigger_id", body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn test(
    State(state): State<AppState>,
    ApiJson(run): ApiJson<TriggerRun>,
) -> Result<Json<Value>, AppError> {
    if run.dataset_id.is_some() || run.layer.is_some() {
        return Err(AppError::unprocessable(
            "test takes geometries; evaluate a layer's rows with POST /triggers/evaluate",
        ));
    }
    let trigger = trigger_of(&state, &run).await?;
    let op_text = run.op.as_deref().unwrap_or("INSERT");
    let op = ChangeOp::parse(op_text).ok_or_else(|| {
        AppError::unprocessable(format!("op {op_text:?} is not INSERT, UPDATE or DELETE"))
    })?;
    let given = given_rows(&state, &run).await?;
    let (matched, rows, evaluated) = match &given {
        Some(rows) => {
            let (matched, results) = evaluate_rows(&state, &trigger, rows).await?;
            (matched, results, true)
        }
        None => (vec![None], Vec::new(), false),
    };
    let event_matches = op.matches(&trigger.spec.event);
    let would_fire = trigger.spec.enabled && event_matches && !matched.is_empty();
    let change = Change {
        dataset_id: trigger.spec.dataset_id.clone(),
        layer: trigger.spec.layer.clone(),
        table: trigger.spec.table.clone(),
        op,
        rows: given.unwrap_or_default(),
    };
    let done = if would_fire {
        actions::run(&state, &trigger, &change, &matched, true).await
    } else {
        Vec::new()
    };
    let answer = json!({"timestamp": crate::timestamp::now(), "source": "test", "trigger_id": run.trigger_id,
        "name": trigger.spec.name, "table": trigger.spec.table, "event": trigger.spec.event, "op": op.as_str(),
        "enabled": trigger.spec.enabled, "event_matches": event_matches, "predicates_evaluated": evaluated,
        "would_fire": would_fire, "matched": if evaluated { json!(matched) } else { json!([]) },
        "rows": rows, "operations": trigger.spec.operations, "actions": done});
    announce(&state, &answer);
    Ok(Json(answer))
}

/// Evaluate a trigger's predicates against data: given GeoJSON geometries or features, or the
/// rows of a stored layer (`dataset_id`, `layer`; at most 10,000). Answers which rows match.
#[utoipa::path(post, path = "/triggers/evaluate", tag = "triggers",
    request_body(content = TriggerRun, example = run_example),
    responses((status = 200, description = "{trigger_id, total, matched_count, matched, rows: [{fid, matches, predicates}], truncated}", body = Object),
        (status = 404, description = "Unknown trigger, dataset or layer", body = crate::api::error::ErrorBody),
        (status = 415, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn evaluate(
    State(state): State<AppState>,
    ApiJson(run): ApiJson<TriggerRun>,
) -> Result<Json<Value>, AppError> {
    let trigger = trigger_of(&state, &run).await?;
    let (mut rows, from_layer) = match (given_rows(&state, &run).await?, &run.dataset_id) {
        (Some(rows), None) => (rows, false),
        (None, Some(dataset_id)) => {
            let dataset = crate::datasets::lookup::find(&state, dataset_id).await?;
            let layer = match &run.layer {
                Some(name) => {
                    crate::datasets::loaded_layer::find_layer(&state, dataset_id, name).await?
                }
                None => dataset.layers.first().cloned().ok_or_else(|| {
                    AppError::not_found(format!("dataset {dataset_id} has no layer"))
                })?,
            };
            (tracking::layer_rows(&state, &layer.table_name).await?, true)
        }
        (None, None) => {
            return Err(AppError::unprocessable(
                "give the data: geometry, feature or features, or dataset_id (and layer)",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(AppError::unprocessable(
                "give either geometries or dataset_id, not both",
            ));
        }
    };
    let total = rows.len();
    let truncated = from_layer && total > MAX_LAYER_ROWS;
    rows.truncate(MAX_LAYER_ROWS);
    let (matched, results) = evaluate_rows(&state, &trigger, &rows).await?;
    let answer = json!({"timestamp": crate::timestamp::now(), "source": "evaluate", "trigger_id": run.trigger_id,
        "name": trigger.spec.name, "table": trigger.spec.table, "total": total, "matched_count": matched.len(),
        "matched": matched, "rows": results, "truncated": truncated});
    announce(&state, &answer);
    Ok(Json(answer))
}

/// Server-sent events: every trigger evaluation as it happens (firings on data changes,
/// tests, evaluations, validations): `{timestamp, source, trigger_id, name, table, ...}`.
#[utoipa::path(get, path = "/triggers/eval-stream", tag = "triggers",
    responses((status = 200, description = "text/event-stream", content_type = "text/event-stream")))]
pub async fn eval_stream(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let receiver = state.triggers().evaluations().subscribe();
    let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(event) => return Some((event, receiver)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(events.map(|event| Ok(Event::default().data(event.to_string()))))
        .keep_alive(KeepAlive::default())
}
