//! A map page per collection (`/ogc/collections/{id}/map`): MapLibre GL JS, served from this
//! server (the npm package's files, `GEOMILL_MAPLIBRE_DIR`), drawing the collection's vector
//! tiles, so a person can look at the data, drawn with the layer's style (`/datasets/{id}/styles`).
//! The map opens on where the data is (across the antimeridian when the data is).

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::json;

use crate::error::AppError;
use crate::state::AppState;
use crate::styles::maplibre::paint;
use crate::styles::stored::stored_style;

const PAGE: &str = include_str!("../assets/map.html");

/// The map page of a collection.
#[utoipa::path(get, path = "/ogc/collections/{id}/map", tag = "ogc",
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn map_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Html<String>, AppError> {
    let (dataset, layer) = super::wire::resolve(&state, &id).await?;
    let engine = state.store();
    let record = layer.clone();
    // MapLibre refuses latitudes past ±90 (a real layer's noisy polar edge can pass them) and
    // cannot show past Web Mercator's ±85.05.
    let bounds = crate::blocking::blocking(move || engine.display_extent(&record))
        .await?
        .map(|[west, south, east, north]| {
            use geomill_backends::store::MAX_TILE_LATITUDE as LIMIT;
            [
                west.max(-180.0),
                south.clamp(-LIMIT, LIMIT),
                east.min(west.max(-180.0) + 360.0),
                north.clamp(-LIMIT, LIMIT),
            ]
        });
    // The layer's stored style, or its default single symbol.
    let (style, _) = stored_style(&state, &dataset.id, &layer).await?;
    let title = format!("{} / {}", dataset.name, layer.name);
    let escaped: String = title
        .chars()
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            '"' => "&quot;".to_owned(),
            other => other.to_string(),
        })
        .collect();
    // JSON literals are valid JavaScript; `<` is escaped so no value can close the script.
    let literal = |value: serde_json::Value| value.to_string().replace('<', "\\u003c");
    let page = PAGE
        .replace("__TITLE__", &escaped)
        .replace(
            "__TILEJSON_URL__",
            &literal(json!(format!(
                "/ogc/collections/{}/tiles",
                super::wire::urlencode(&id)
            ))),
        )
        .replace("__LAYER__", &literal(json!(layer.name)))
        .replace("__BOUNDS__", &literal(json!(bounds)))
        .replace("__PAINT__", &literal(paint(&style)));
    Ok(Html(page))
}

/// MapLibre GL JS's script and style sheet.
pub async fn asset(
    State(state): State<AppState>,
    Path(file): Path<String>,
) -> Result<Response, AppError> {
    let content_type = match file.as_str() {
        "maplibre-gl.js" => "text/javascript",
        "maplibre-gl.css" => "text/css",
        _ => return Err(AppError::not_found(format!("no asset {file:?}"))),
    };
    let folder = state.config().maplibre_dir.clone().ok_or_else(|| {
        AppError::not_found(
            "the map page's MapLibre GL files are not installed: set GEOMILL_MAPLIBRE_DIR (scripts/setup.sh fetches them)",
        )
    })?;
    let bytes = tokio::fs::read(folder.join(&file)).await.map_err(|e| {
        AppError::not_found(format!(
            "{file} is not in GEOMILL_MAPLIBRE_DIR={}: {e}",
            folder.display()
        ))
    })?;
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            ),
        ],
        bytes,
    )
        .into_response())
}
