//! Field summaries of a layer: distinct values, statistics, class breaks.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use geomill_backends::store::LayerRecord;
use geomill_native::classify::breaks;
use geomill_planner::plan::operator::ClassMethod;
use geomill_planner::schema::FieldType;
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::{ApiJson, ApiQuery};
use crate::blocking::blocking;

use crate::datasets::loaded_layer::find_layer;
use crate::error::AppError;
use crate::state::AppState;

/// Values Jenks breaks are computed from at most (a reproducible sample beyond).
const JENKS_SAMPLE: i64 = 3000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/datasets/{id}/layers/{layer}/distinct/{field}",
            get(distinct),
        )
        .route("/datasets/{id}/layers/{layer}/stats/{field}", get(stats))
        .route("/datasets/{id}/layers/{layer}/breaks", post(class_breaks))
}

/// The layer and the type of one of its fields; 404 naming the fields when it has no such field.
async fn field_of(
    state: &AppState,
    id: &str,
    layer: &str,
    field: &str,
) -> Result<(LayerRecord, FieldType), AppError> {
    let record = find_layer(state, id, layer).await?;
    let engine = state.store();
    let probe = record.clone();
    let schema = blocking(move || engine.layer_schema(&probe)).await?;
    let ty = schema
        .columns
        .iter()
        .find(|c| c.name == field)
        .map(|c| c.ty)
        .ok_or_else(|| {
            AppError::not_found(format!(
                "layer {layer:?} has no field {field:?} (fields: {})",
                schema.names().join(", ")
            ))
        })?;
    Ok((record, ty))
}

fn numeric(field: &str, ty: FieldType) -> Result<(), AppError> {
    match ty {
        FieldType::Integer | FieldType::Double => Ok(()),
        other => Err(AppError::unprocessable(format!(
            "field {field:?} is {}, not numeric",
            other.sql().to_lowercase()
        ))),
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DistinctQuery {
    /// How many values (most frequent first; default 100, at most 10000).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
}

/// The most frequent values of a field with their counts.
#[utoipa::path(get, path = "/datasets/{id}/layers/{layer}/distinct/{field}", tag = "datasets",
    params(("id" = String, Path), ("layer" = String, Path), ("field" = String, Path), DistinctQuery),
    responses((status = 200, description = "{field, distinct, values: [{value, count}]}", body = Object),
        (status = 400, description = "The id is not a UUID, or `limit` is out of range", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn distinct(
    State(state): State<AppState>,
    Path((id, layer, field)): Path<(String, String, String)>,
    ApiQuery(query): ApiQuery<DistinctQuery>,
) -> Result<Json<Value>, AppError> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=10_000).contains(&limit) {
        return Err(AppError::bad_request(format!(
            "limit must be between 1 and 10000, got {limit}"
        )));
    }
    let (record, _) = field_of(&state, &id, &layer, &field).await?;
    let engine = state.store();
    let name = field.clone();
    let (total, values) = blocking(move || engine.distinct_values(&record, &name, limit)).await?;
    let values: Vec<Value> = values
        .iter()
        .map(|v| serde_json::from_str(v).unwrap_or(Value::Null))
        .collect();
    Ok(Json(
        json!({ "field": field, "distinct": total, "values": values }),
    ))
}

/// Count, nulls, min, max, mean, standard deviation and quantiles of a numeric field.
#[utoipa::path(get, path = "/datasets/{id}/layers/{layer}/stats/{field}", tag = "datasets",
    params(("id" = String, Path), ("layer" = String, Path), ("field" = String, Path)),
    responses((status = 200, body = Object), (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn stats(
    State(state): State<AppState>,
    Path((id, layer, field)): Path<(String, String, String)>,
) -> Result<Json<Value>, AppError> {
    let (record, ty) = field_of(&state, &id, &layer, &field).await?;
    numeric(&field, ty)?;
    let engine = state.store();
    let name = field.clone();
    let s = blocking(move || engine.field_stats(&record, &name)).await?;
    let q = |i: usize| s.quantiles.get(i).copied().flatten();
    Ok(Json(json!({
        "field": field, "count": s.count, "nulls": s.nulls, "min": s.min, "max": s.max, "mean": s.mean, "stddev": s.stddev,
        "quantiles": {"p05": q(0), "p25": q(1), "p50": q(2), "p75": q(3), "p95": q(4)},
    })))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BreaksBody {
    pub field: String,
    /// `jenks`, `quantile`, `equal_interval`, `std_dev`, `pretty` or `head_tail_breaks`
    /// (computed as the `classify` capability and mapclassify compute them).
    pub method: String,
    /// Number of classes, 2 to 12 (default 5).
    #[serde(default)]
    pub classes: Option<usize>,
}

/// Class breaks of a numeric field: the upper bound of each class.
#[utoipa::path(post, path = "/datasets/{id}/layers/{layer}/breaks", tag = "datasets",
    params(("id" = String, Path), ("layer" = String, Path)), request_body = BreaksBody,
    responses((status = 200, description = "{field, method, classes, breaks, min}", body = Object),
        (status = 400, description = "The id is not a UUID", body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody), (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn class_breaks(
    State(state): State<AppState>,
    Path((id, layer)): Path<(String, String)>,
    ApiJson(body): ApiJson<BreaksBody>,
) -> Result<Json<Value>, AppError> {
    let classes = body.classes.unwrap_or(5);
    if !(2..=12).contains(&classes) {
        return Err(AppError::unprocessable(format!(
            "classes must be between 2 and 12, got {classes}"
        )));
    }
    let method = body.method.to_ascii_lowercase();
    let Ok(class_method) = serde_json::from_value::<ClassMethod>(json!(method)) else {
        return Err(AppError::unprocessable(format!(
            "method must be jenks, quantile, equal_interval, std_dev, pretty or head_tail_breaks, got {:?}",
            body.method
        )));
    };
    let (record, ty) = field_of(&state, &id, &layer, &body.field).await?;
    numeric(&body.field, ty)?;
    let engine = state.store();
    let (name, cap) = (
        body.field.clone(),
        if class_method == ClassMethod::Jenks {
            JENKS_SAMPLE
        } else {
            i64::MAX
        },
    );
    let values = blocking(move || engine.field_sample(&record, &name, cap)).await?;
    if values.is_empty() {
        return Err(AppError::unprocessable(format!(
            "field {:?} has no values",
            body.field
        )));
    }
    let bounds = breaks(class_method, &values, classes);
    Ok(Json(
        json!({ "field": body.field, "method": method, "classes": bounds.len(), "min": values.first(), "breaks": bounds }),
    ))
}
