//! `/api/portal/sql/execute` and `/api/portal/sql/export`: one read-only query over stored
//! layers (`X-Admin-Key` is checked by the auth guard, see `crate::auth::policy`).

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use geomill_planner::plan::operator::ExportFormat;
use geomill_planner::sql::guard::{ReadOnlyQuery, Refusal};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::ApiJson;
use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::execute::bind_loaded;
use crate::state::AppState;

/// Default and largest number of rows a query returns.
pub(crate) const DEFAULT_ROWS: usize = 1000;
pub(crate) const MAX_ROWS: usize = 10_000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/portal/sql/execute", post(execute))
        .route("/api/portal/sql/export", post(export))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlBody {
    /// One read-only query; tables are layer names (`<dataset id or name>/<layer>`, a dataset
    /// id or name) quoted as identifiers.
    pub query: String,
    /// Rows to return (default 1000, at most 10000); execute only.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Export format (default gpkg); export only.
    #[serde(default)]
    pub format: Option<String>,
}

/// A refusal as the API answers it: a statement the caller may not run is a 403
/// `forbidden_sql` naming what was refused; text that is not SQL a 422 `invalid_sql`.
fn refused(refusal: Refusal) -> AppError {
    match refusal {
        Refusal::Forbidden(reason) => AppError::new(ErrorKind::Forbidden, "forbidden_sql", reason),
        Refusal::Malformed(reason) => AppError::new(ErrorKind::Invalid, "invalid_sql", reason),
    }
}

/// `query` checked by the SQL guard and by DuckDB's own parser, which decides (see
/// `geomill_backends::duckdb::check_console_query`): one SELECT over plain table names.
pub(crate) async fn guarded(state: &AppState, query: &str) -> Result<ReadOnlyQuery, AppError> {
    let (engine, text) = (state.embedded(), query.to_owned());
    blocking(move || engine.check_console_query(&text))
        .await?
        .map_err(refused)
}

async fn bindings(
    state: &AppState,
    query: &str,
) -> Result<Vec<geomill_backends::store::Binding>, AppError> {
    let checked = guarded(state, query).await?;
    bind_loaded(state, &checked.tables, None).await
}

/// A query the engine refused or stopped: the request's fault (422), with the engine's reason.
pub(crate) fn failed(error: geomill_backends::BackendError) -> AppError {
    match error {
        geomill_backends::BackendError::Query { reason, .. } => AppError::new(
            ErrorKind::Invalid,
            "query_failed",
            reason.lines().next().unwrap_or_default().to_owned(),
        ),
        other => AppError::from(other),
    }
}

/// Run one read-only query and answer its rows.
#[utoipa::path(post, path = "/api/portal/sql/execute", tag = "sql", request_body = SqlBody,
    responses((status = 200, description = "{columns: [{name, type}], rows, row_count, truncated}", body = Object),
        (status = 400, description = "limit out of range", body = crate::api::error::ErrorBody),
        (status = 401, body = crate::api::error::ErrorBody),
        (status = 403, description = "X-Admin-Key wrong, or `forbidden_sql`: not one read-only query over layers", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "Not SQL (`invalid_sql`), an unknown layer, or a query the engine failed or stopped", body = crate::api::error::ErrorBody)))]
pub async fn execute(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<SqlBody>,
) -> Result<Json<Value>, AppError> {
    let limit = body.limit.unwrap_or(DEFAULT_ROWS);
    if limit > MAX_ROWS {
        return Err(AppError::bad_request(format!(
            "limit must be at most {MAX_ROWS}, got {limit}"
        )));
    }
    let views = state
        .store()
        .source_views(&bindings(&state, &body.query).await?);
    let engine = state.embedded();
    let timeout = std::time::Duration::from_secs(state.config().sql_timeout_s);
    let query = body.query.clone();
    let result =
        tokio::task::spawn_blocking(move || engine.query_rows(&views, &query, limit, timeout))
            .await
            .map_err(|e| AppError::internal(&e))?
            .map_err(failed)?;
    Ok(Json(rows_body(&result)))
}

/// `{columns: [{name, type}], rows, row_count, truncated}` of a query's rows.
pub(crate) fn rows_body(result: &geomill_backends::duckdb::QueryRows) -> Value {
    let rows: Vec<Value> = result
        .rows
        .iter()
        .map(|r| serde_json::from_str(r).unwrap_or(Value::Null))
        .collect();
    let columns: Vec<Value> = result
        .columns
        .iter()
        .map(|(name, ty)| json!({"name": name, "type": ty}))
        .collect();
    json!({ "columns": columns, "row_count": rows.len(), "rows": rows, "truncated": result.truncated })
}

/// Run one read-only query and answer its result as a file.
#[utoipa::path(post, path = "/api/portal/sql/export", tag = "sql", request_body = SqlBody,
    responses((status = 200, description = "The file"),
        (status = 401, body = crate::api::error::ErrorBody),
        (status = 403, description = "X-Admin-Key wrong, or `forbidden_sql`: not one read-only query over layers", body = crate::api::error::ErrorBody),
        (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, description = "Not SQL (`invalid_sql`), an unknown layer or format, or a query the engine failed", body = crate::api::error::ErrorBody)))]
pub async fn export(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<SqlBody>,
) -> Result<Response, AppError> {
    let format_name = body
        .format
        .as_deref()
        .unwrap_or("gpkg")
        .to_ascii_lowercase();
    let format: ExportFormat =
        serde_json::from_value(Value::String(format_name.clone())).map_err(|_| {
            AppError::unprocessable(format!(
                "format {format_name:?} is not one of gpkg, geojson, fgb, parquet, csv, kml, gml"
            ))
        })?;
    if format == ExportFormat::Shp {
        return Err(AppError::unprocessable(
            "query results export as gpkg, geojson, fgb, parquet, csv, kml or gml",
        ));
    }
    let views = state
        .store()
        .source_views(&bindings(&state, &body.query).await?);
    let scratch = state
        .config()
        .data_dir
        .join("tmp")
        .join(uuid::Uuid::new_v4().to_string());
    tokio::fs::create_dir_all(&scratch)
        .await
        .map_err(|e| AppError::internal(&e))?;
    let target = scratch.join(format!("query.{format_name}"));
    let engine = state.embedded();
    let (query, path) = (body.query.clone(), target.display().to_string());
    let written =
        tokio::task::spawn_blocking(move || engine.export_query(&views, &query, &path, format))
            .await
            .map_err(|e| AppError::internal(&e))
            .and_then(|r| r.map_err(failed));
    let bytes = match written {
        Ok(()) => tokio::fs::read(&target)
            .await
            .map_err(|e| AppError::internal(&e)),
        Err(error) => Err(error),
    };
    let _ = tokio::fs::remove_dir_all(&scratch).await;
    let bytes = bytes?;
    Ok((
        [(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"query.{format_name}\""),
        )],
        bytes,
    )
        .into_response())
}
