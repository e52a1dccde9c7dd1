//! Sessions: ephemeral in-memory workspaces. Stored layers are copied into one, read-only
//! queries run over its tables, and it ends when deleted or idle past its time-out.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::extract::ApiJson;
use super::sql::{DEFAULT_ROWS, MAX_ROWS, failed, rows_body};
use crate::blocking::blocking;
use crate::error::AppError;
use crate::sessions::{DEFAULT_IDLE_TIMEOUT_S, MAX_IDLE_TIMEOUT_S, Session};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/sessions", post(create).get(list))
        .route("/sessions/{id}", get(read).delete(remove))
        .route("/sessions/{id}/layers", post(add_layer).get(layers))
        .route("/sessions/{id}/query", post(query))
}

/// The live session `id` (marked used), or a 404.
fn live(state: &AppState, id: &str) -> Result<Session, AppError> {
    state
        .sessions()
        .touch(id)
        .ok_or_else(|| AppError::not_found(format!("no session {id} (it may have expired)")))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    #[serde(default)]
    pub name: Option<String>,
    /// `memory` (the default and only kind: an in-memory DuckDB database).
    #[serde(default)]
    pub kind: Option<String>,
    /// Seconds without use after which the session ends (default 900, 1 to 86400).
    #[serde(default)]
    pub idle_timeout_s: Option<u64>,
}

/// Open a session.
#[utoipa::path(post, path = "/sessions", tag = "sessions", request_body = SessionBody,
    responses((status = 201, body = Session), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<SessionBody>,
) -> Result<(StatusCode, Json<Session>), AppError> {
    if let Some(kind) = body.kind.as_deref()
        && kind != "memory"
    {
        return Err(AppError::unprocessable(format!(
            "kind {kind:?}: sessions are in-memory databases (kind \"memory\")"
        )));
    }
    let idle_timeout_s = body.idle_timeout_s.unwrap_or(DEFAULT_IDLE_TIMEOUT_S);
    if !(1..=MAX_IDLE_TIMEOUT_S).contains(&idle_timeout_s) {
        return Err(AppError::unprocessable(format!(
            "idle_timeout_s is from 1 to {MAX_IDLE_TIMEOUT_S}, got {idle_timeout_s}"
        )));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let (engine, key) = (state.store(), id.clone());
    blocking(move || engine.open_session(&key)).await?;
    let session = state.sessions().insert(&id, body.name, idle_timeout_s);
    Ok((StatusCode::CREATED, Json(session)))
}

/// The live sessions.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionList {
    pub sessions: Vec<Session>,
    pub total: usize,
}

/// Every live session, oldest first.
#[utoipa::path(get, path = "/sessions", tag = "sessions", responses((status = 200, body = SessionList)))]
pub async fn list(State(state): State<AppState>) -> Json<SessionList> {
    let sessions = state.sessions().list();
    Json(SessionList {
        total: sessions.len(),
        sessions,
    })
}

/// One live session (reading it counts as use).
#[utoipa::path(get, path = "/sessions/{id}", tag = "sessions",
    responses((status = 200, body = Session), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Session>, AppError> {
    live(&state, &id).map(Json)
}

/// End a session and free its memory.
#[utoipa::path(delete, path = "/sessions/{id}", tag = "sessions",
    responses((status = 200, description = "{\"deleted\": id}", body = Object), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    if !state.sessions().remove(&id) {
        return Err(AppError::not_found(format!("no session {id}")));
    }
    let (engine, key) = (state.store(), id.clone());
    blocking(move || engine.close_session(&key)).await?;
    Ok(Json(json!({ "deleted": id })))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionLayerBody {
    /// The stored dataset to copy a layer of.
    pub dataset_id: String,
    /// Its layer (default: the first).
    #[serde(default)]
    pub layer: Option<String>,
    /// The table name in the session (default: the layer's name); replaced if it exists.
    #[serde(default)]
    pub name: Option<String>,
}

/// A table of a session.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionTable {
    pub name: String,
    pub rows: i64,
}

/// Copy a stored layer into the session as a table.
#[utoipa::path(post, path = "/sessions/{id}/layers", tag = "sessions", request_body = SessionLayerBody,
    responses((status = 201, body = SessionTable),
        (status = 400, description = "`dataset_id` is not a UUID", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn add_layer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<SessionLayerBody>,
) -> Result<(StatusCode, Json<SessionTable>), AppError> {
    live(&state, &id)?;
    let (layer, name) = super::datasets::layer_to_copy(
        &state,
        &body.dataset_id,
        body.layer.as_deref(),
        body.name.as_deref(),
    )
    .await?;
    let (engine, key, table) = (state.store(), id.clone(), name.clone());
    let rows = blocking(move || engine.copy_into_session(&key, &layer, &table)).await?;
    Ok((StatusCode::CREATED, Json(SessionTable { name, rows })))
}

/// The session's tables.
#[utoipa::path(get, path = "/sessions/{id}/layers", tag = "sessions",
    responses((status = 200, body = [SessionTable]), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn layers(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<SessionTable>>, AppError> {
    live(&state, &id)?;
    let engine = state.store();
    let tables = blocking(move || engine.session_tables(&id)).await?;
    Ok(Json(
        tables
            .into_iter()
            .map(|(name, rows)| SessionTable { name, rows })
            .collect(),
    ))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionQueryBody {
    /// One read-only query over the session's tables (bare names).
    pub query: String,
    /// Rows to return (default 1000, at most 10000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One read-only query over the session's tables, checked like the SQL endpoint's (and, like
/// it, behind `X-Admin-Key` when `GEOMILL_ADMIN_KEY` is set: the auth guard checks it).
#[utoipa::path(post, path = "/sessions/{id}/query", tag = "sessions", request_body = SessionQueryBody,
    responses((status = 200, description = "{columns: [{name, type}], rows, row_count, truncated}", body = Object),
        (status = 400, description = "A limit above 10000", body = crate::api::error::ErrorBody),
        (status = 401, body = crate::api::error::ErrorBody), (status = 403, description = "X-Admin-Key wrong, or `forbidden_sql`: not one read-only query", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody), (status = 415, description = "The body is not sent as application/json", body = crate::api::error::ErrorBody),
        (status = 422, body = crate::api::error::ErrorBody)))]
pub async fn query(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<SessionQueryBody>,
) -> Result<Json<Value>, AppError> {
    live(&state, &id)?;
    let limit = body.limit.unwrap_or(DEFAULT_ROWS);
    if limit > MAX_ROWS {
        return Err(AppError::bad_request(format!(
            "limit must be at most {MAX_ROWS}, got {limit}"
        )));
    }
    let checked = super::sql::guarded(&state, &body.query).await?;
    let (engine, key) = (state.store(), id.clone());
    let stored = blocking(move || engine.session_tables(&key)).await?;
    let tables = session_bindings(&checked.tables, &stored)?;
    let engine = state.store();
    let timeout = std::time::Duration::from_secs(state.config().sql_timeout_s);
    let result = tokio::task::spawn_blocking(move || {
        engine.session_query(&id, &body.query, &tables, limit, timeout)
    })
    .await
    .map_err(|e| AppError::internal(&e))?
    .map_err(failed)?;
    Ok(Json(rows_body(&result)))
}

/// Each table name a session query reads, with the session's table it names (matched without
/// regard to case, as DuckDB matches names); a name of no table of the session is a 422.
fn session_bindings(
    names: &std::collections::BTreeSet<String>,
    stored: &[(String, i64)],
) -> Result<Vec<(String, String)>, AppError> {
    let mut bindings = Vec::new();
    let mut unknown = Vec::new();
    for name in names {
        match stored.iter().find(|(s, _)| s.eq_ignore_ascii_case(name)) {
            Some((table, _)) => bindings.push((name.clone(), table.clone())),
            None => unknown.push(name.as_str()),
        }
    }
    if unknown.is_empty() {
        return Ok(bindings);
    }
    Err(AppError::unprocessable(format!(
        "{} name no table of the session: copy a layer in with POST /sessions/{{id}}/layers",
        unknown.join(", ")
    )))
}

/// Ends expired sessions, freeing their databases, until the server stops.
pub async fn sweep_expired(state: AppState) {
    let mut ticks = tokio::time::interval(crate::sessions::SWEEP_EVERY);
    loop {
        ticks.tick().await;
        for id in state.sessions().take_expired() {
            let engine = state.store();
            let key = id.clone();
            match tokio::task::spawn_blocking(move || engine.close_session(&key)).await {
                Ok(Ok(())) => tracing::info!(session = %id, "session expired and closed"),
                Ok(Err(error)) => {
                    tracing::warn!(session = %id, %error, "an expired session did not close")
                }
                Err(error) => {
                    tracing::warn!(session = %id, %error, "an expired session did not close")
                }
            }
        }
    }
}
