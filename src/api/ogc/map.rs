//! A map page per collection (`/ogc/collections/{id}/map`): MapLibre GL JS, served from this
//! server (the npm package's files, `GEOMILL_MAPLIBRE_DIR`), drawing the collection's vector
//! tiles, so a person can look at the data, drawn with the layer's style (`/datasets/{id}/styles`).
//! The map opens on where the data is (across the antimeridian when the data is). A raster
//! dataset can be drawn underneath (`?raster=<id>`); `/rasters/{id}/map` draws one alone.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::json;

use crate::api::extract::ApiQuery;
use crate::api::rasters::Underlay;
use crate::error::AppError;
use crate::state::AppState;
use crate::styles::maplibre::paint;
use crate::styles::stored::stored_style;

const PAGE: &str = include_str!("../assets/map.html");

/// `?raster=<id>`: a raster dataset drawn under the layer (with its tiles' style query).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MapQuery {
    /// A raster dataset's id, drawn under the layer.
    pub raster: Option<String>,
    /// The raster's bands (as for its tiles).
    pub bands: Option<String>,
    /// The raster's ranges (as for its tiles).
    pub rescale: Option<String>,
    /// The raster's colour ramp (as for its tiles).
    pub ramp: Option<String>,
    /// The raster's resampling (as for its tiles).
    pub resampling: Option<String>,
}

/// The map page of a collection.
#[utoipa::path(get, path = "/ogc/collections/{id}/map", tag = "ogc", params(MapQuery),
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn map_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<MapQuery>,
) -> Result<Html<String>, AppError> {
    let (dataset, layer) = super::wire::resolve(&state, &id).await?;
    let underlay = match &query.raster {
        Some(raster) => {
            let style = crate::api::rasters::RasterStyleQuery {
                bands: query.bands.clone(),
                rescale: query.rescale.clone(),
                ramp: query.ramp.clone(),
                resampling: query.resampling.clone(),
            };
            Some(crate::api::rasters::underlay(&state, raster, &style).await?)
        }
        None => None,
    };
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
    let vector = VectorLayer {
        tilejson: format!("/ogc/collections/{}/tiles", super::wire::urlencode(&id)),
        name: layer.name.clone(),
        paint: paint(&style),
    };
    let bounds = bounds.or_else(|| underlay.as_ref().and_then(|u| u.bounds));
    let title = format!("{} / {}", dataset.name, layer.name);
    Ok(Html(page(&title, Some(vector), underlay, bounds)))
}

/// A vector layer drawn on a map page.
pub struct VectorLayer {
    /// Its TileJSON's URL (relative).
    pub tilejson: String,
    /// The layer in the tiles.
    pub name: String,
    /// MapLibre paint properties per geometry kind (`fill`, `line`, `circle`).
    pub paint: serde_json::Value,
}

/// The map page: a raster `underlay` under a `vector` layer (either may be absent), opened on
/// `bounds` ([west, south, east, north]).
pub fn page(
    title: &str,
    vector: Option<VectorLayer>,
    underlay: Option<Underlay>,
    bounds: Option<[f64; 4]>,
) -> String {
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
    let (tilejson, layer, paint) = match vector {
        Some(v) => (json!(v.tilejson), json!(v.name), v.paint),
        None => (json!(null), json!(null), json!({})),
    };
    let (raster_tilejson, raster_name) = match underlay {
        Some(u) => (json!(u.tilejson), json!(u.name)),
        None => (json!(null), json!(null)),
    };
    PAGE.replace("__TITLE__", &escaped)
        .replace("__TILEJSON_URL__", &literal(tilejson))
        .replace("__LAYER__", &literal(layer))
        .replace("__RASTER_TILEJSON_URL__", &literal(raster_tilejson))
        .replace("__RASTER__", &literal(raster_name))
        .replace("__BOUNDS__", &literal(json!(bounds)))
        .replace("__PAINT__", &literal(paint))
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
