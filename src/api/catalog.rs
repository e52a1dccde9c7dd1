//! The catalog: `GET /catalog/projections` (the EPSG coordinate reference systems of PROJ's own
//! database, searchable and paged) and `GET /catalog/projections/{code}`.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::extract::ApiQuery;
use crate::catalog::projections::{self, Projection};
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// Most projections in one page.
pub const MAX_LIMIT: usize = 500;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/catalog/projections", get(list))
        .route("/catalog/projections/{code}", get(one))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProjectionQuery {
    /// A code (`2154`, `EPSG:2154`) or words of the name or area of use (every word must
    /// appear; case-insensitive). Default: every projection.
    pub q: Option<String>,
    /// Projections per page, 1 to 500 (default 50).
    pub limit: Option<usize>,
    /// Projections skipped (default 0).
    pub offset: Option<usize>,
}

/// A page of projections.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProjectionPage {
    pub projections: Vec<Projection>,
    /// How many match the search.
    pub total: usize,
    pub limit: usize,
    pub offset: usize,
}

/// Every projection, read once from PROJ's database off the async threads.
async fn every(_state: &AppState) -> Result<&'static [Projection], AppError> {
    tokio::task::spawn_blocking(projections::all)
        .await
        .map_err(|e| AppError::internal(&e))?
        .map_err(|reason| {
            AppError::new(
                ErrorKind::Unavailable,
                "projections_unavailable",
                format!("the projection catalog cannot be read: {reason}"),
            )
        })
}

/// The EPSG geographic 2D and projected CRS of PROJ's database (not deprecated), ordered by
/// code: code, name, kind, area of use with its bounds (degrees), unit of the first axis.
#[utoipa::path(get, path = "/catalog/projections", tag = "catalog", params(ProjectionQuery),
    responses((status = 200, body = ProjectionPage),
        (status = 400, description = "limit outside 1 to 500, or a malformed query", body = crate::api::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ProjectionQuery>,
) -> Result<Json<ProjectionPage>, AppError> {
    let limit = query.limit.unwrap_or(50);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(AppError::bad_request(format!(
            "limit must be between 1 and {MAX_LIMIT}"
        )));
    }
    let offset = query.offset.unwrap_or(0);
    let q = query.q.unwrap_or_default();
    let found: Vec<&Projection> = every(&state)
        .await?
        .iter()
        .filter(|p| projections::matches(p, &q))
        .collect();
    Ok(Json(ProjectionPage {
        total: found.len(),
        projections: found
            .into_iter()
            .skip(offset)
            .take(limit)
            .cloned()
            .collect(),
        limit,
        offset,
    }))
}

/// One projection by its code (`EPSG:2154` or `2154`): 404 when PROJ's database has no such
/// geographic 2D or projected EPSG CRS, 400 for what is not an EPSG code.
#[utoipa::path(get, path = "/catalog/projections/{code}", tag = "catalog",
    params(("code" = String, Path, description = "`EPSG:<code>` or the number alone")),
    responses((status = 200, body = Projection),
        (status = 400, description = "Not an EPSG code", body = crate::api::error::ErrorBody),
        (status = 404, description = "No such projection", body = crate::api::error::ErrorBody)))]
pub async fn one(
    State(state): State<AppState>,
    Path(code): Path<String>,
) -> Result<Json<Projection>, AppError> {
    let number = code
        .strip_prefix("EPSG:")
        .or_else(|| code.strip_prefix("epsg:"))
        .unwrap_or(&code);
    if number.is_empty() || number.len() > 9 || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AppError::bad_request(format!(
            "{code:?} is not an EPSG code (EPSG:2154, or 2154)"
        )));
    }
    let wanted = format!("EPSG:{number}");
    every(&state)
        .await?
        .iter()
        .find(|p| p.code == wanted)
        .cloned()
        .map(Json)
        .ok_or_else(|| {
            AppError::not_found(format!(
                "unknown projection {wanted}: not a geographic 2D or projected EPSG CRS of PROJ's database"
            ))
        })
}
