//! Vector tiles of a collection: Mapbox Vector Tiles in Web Mercator with ETags and an
//! in-memory cache keyed by the layer's data version, and the TileJSON document describing them.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use geomill_planner::schema::FieldType;
use serde_json::{Value, json};

use super::wire::{JSON, base_url, data_version, resolve, typed, urlencode};
use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;
use crate::tile_cache::TileKey;

const MVT: &str = "application/vnd.mapbox-vector-tile";
/// How long clients and proxies may keep a tile (vector or raster): data only changes when it
/// is reloaded, which changes the ETag.
const TILE_CACHE_CONTROL: &str = "public, max-age=300";
/// Highest zoom level served.
const MAX_ZOOM: u32 = 22;

/// TileJSON 3.0 for the collection's vector tiles.
#[utoipa::path(get, path = "/ogc/collections/{id}/tiles", tag = "ogc",
    responses((status = 200, description = "TileJSON", body = Object), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn tilejson(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (_, layer) = resolve(&state, &id).await?;
    let engine = state.store();
    let (record, schema_layer) = (layer.clone(), layer.clone());
    let bounds = blocking(move || engine.layer_extent(&record)).await?;
    let engine = state.store();
    let schema = blocking(move || engine.layer_schema(&schema_layer)).await?;
    let fields: serde_json::Map<String, Value> = schema
        .columns
        .iter()
        .filter(|c| c.name != "geom")
        .map(|c| {
            let kind = match c.ty {
                FieldType::Integer | FieldType::Double => "Number",
                FieldType::Boolean => "Boolean",
                _ => "String",
            };
            (c.name.clone(), json!(kind))
        })
        .collect();
    let base = base_url(&headers);
    let mut document = json!({
        "tilejson": "3.0.0",
        "name": id,
        "tiles": [format!("{base}/ogc/collections/{}/tiles/{{z}}/{{x}}/{{y}}.mvt", urlencode(&id))],
        "minzoom": 0,
        "maxzoom": MAX_ZOOM,
        "vector_layers": [{"id": layer.name, "fields": fields}],
    });
    if let Some([west, south, east, north]) = bounds {
        // Within the tile matrix (a real layer's noisy edge can pass ±180 and ±90, which map
        // clients refuse as bounds).
        use geomill_backends::store::MAX_TILE_LATITUDE as LIMIT;
        document["bounds"] = json!([
            west.clamp(-180.0, 180.0),
            south.clamp(-LIMIT, LIMIT),
            east.clamp(-180.0, 180.0),
            north.clamp(-LIMIT, LIMIT)
        ]);
    }
    Ok(typed(JSON, &document))
}

/// The tile index of path segments `z`, `x` and `{y}.<extension>`; 400 naming the problem when
/// it is not one of the tile matrix.
pub(crate) fn tile_index(
    z: &str,
    x: &str,
    y: &str,
    extension: &str,
) -> Result<(u32, u32, u32), AppError> {
    let y = y
        .strip_suffix(extension)
        .and_then(|y| y.strip_suffix('.'))
        .ok_or_else(|| {
            AppError::bad_request(format!("tile {y:?}: tiles are served as {{y}}.{extension}"))
        })?;
    let number = |name: &str, text: &str| {
        text.parse::<u32>()
            .map_err(|_| AppError::bad_request(format!("{name}={text:?} is not a tile index")))
    };
    let (z, x, y) = (number("z", z)?, number("x", x)?, number("y", y)?);
    if z > MAX_ZOOM {
        return Err(AppError::bad_request(format!(
            "z={z}: zoom levels go from 0 to {MAX_ZOOM}"
        )));
    }
    let size = 1_u32 << z;
    if x >= size || y >= size {
        return Err(AppError::bad_request(format!(
            "tile {z}/{x}/{y} is outside the tile matrix (x and y below {size} at zoom {z})"
        )));
    }
    Ok((z, x, y))
}

/// Tile z/x/y (`{y}.mvt`) as a Mapbox Vector Tile in Web Mercator, one layer named after the
/// dataset layer; 204 when no feature touches it, 400 outside the tile matrix.
#[utoipa::path(get, path = "/ogc/collections/{id}/tiles/{z}/{x}/{y}.mvt", tag = "ogc",
    responses((status = 200, description = "A Mapbox Vector Tile", content_type = "application/vnd.mapbox-vector-tile"),
        (status = 204, description = "Empty tile"),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn tile(
    State(state): State<AppState>,
    Path((id, z, x, y)): Path<(String, String, String, String)>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (z, x, y) = tile_index(&z, &x, &y, "mvt")?;
    let (dataset, layer) = resolve(&state, &id).await?;
    if state.store().location().is_postgis() {
        // Persistent mode: other clients of the database change the rows without geomill
        // knowing, so a tile is drawn from the table each time and not kept.
        let engine = state.store();
        let name = layer.name.clone();
        let bytes = blocking(move || engine.tile(&layer, &name, (z, x, y))).await?;
        let fresh = [(header::CACHE_CONTROL, "no-cache".to_owned())];
        if bytes.is_empty() {
            return Ok((StatusCode::NO_CONTENT, fresh).into_response());
        }
        return Ok((fresh, [(header::CONTENT_TYPE, MVT.to_owned())], bytes).into_response());
    }
    let key = TileKey {
        table: layer.table_name.clone(),
        version: data_version(&dataset),
        zxy: (z, x, y),
    };
    let engine = state.store();
    let name = layer.name.clone();
    let draw = blocking(move || engine.tile(&layer, &name, (z, x, y)));
    serve_cached(&state, key, &headers, MVT, draw).await
}

/// A tile kept in the tile cache under `key`, with its ETag: 304 when `If-None-Match` names
/// it, else the cached bytes or those `draw` makes (then kept) as `content_type`; 204 when
/// they are empty.
pub(crate) async fn serve_cached(
    state: &AppState,
    key: TileKey,
    headers: &HeaderMap,
    content_type: &'static str,
    draw: impl std::future::Future<Output = Result<Vec<u8>, AppError>>,
) -> Result<Response, AppError> {
    let etag = key.etag();
    let cached = [
        (header::ETAG, etag.clone()),
        (header::CACHE_CONTROL, TILE_CACHE_CONTROL.to_owned()),
    ];
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    if unchanged {
        return Ok((StatusCode::NOT_MODIFIED, cached).into_response());
    }
    let bytes = match state.tiles().get(&key) {
        Some(bytes) => bytes,
        None => {
            let bytes = std::sync::Arc::new(draw.await?);
            state.tiles().put(key, bytes.clone());
            bytes
        }
    };
    if bytes.is_empty() {
        return Ok((StatusCode::NO_CONTENT, cached).into_response());
    }
    Ok((
        cached,
        [(header::CONTENT_TYPE, content_type.to_owned())],
        bytes.as_ref().clone(),
    )
        .into_response())
}
