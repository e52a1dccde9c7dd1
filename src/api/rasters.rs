//! Raster datasets on the map: PNG tiles in Web Mercator (`/rasters/{id}/tiles/{z}/{x}/{y}.png`,
//! one band through a colour ramp or three as RGB, nodata transparent), their TileJSON, and a
//! map page of the raster alone (a vector layer's map page draws it underneath with `?raster=`).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{Html, Response};
use axum::routing::get;
use geomill_backends::store::DatasetRecord;
use geomill_native::raster::tiles::{
    Footprint, Ramp, TileResampling, TileStyle, default_bands, default_ranges, footprint, render,
};
use geomill_native::raster::{RasterError, RasterInfo};
use serde::Deserialize;
use serde_json::json;

use super::extract::ApiQuery;
use super::ogc::tiles::serve_cached;
use super::ogc::wire::{JSON, base_url, data_version, typed, urlencode};
use crate::blocking::blocking;
use crate::datasets::raster::{FORMAT, info};
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;
use crate::tile_cache::TileKey;

const PNG: &str = "image/png";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/rasters/{id}/tiles", get(tilejson))
        .route("/rasters/{id}/tiles/{z}/{x}/{y}", get(tile))
        .route("/rasters/{id}/map", get(map_page))
}

/// How a raster's tiles are drawn (each optional: the raster's defaults).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RasterStyleQuery {
    /// One band (`1`, drawn with `ramp`) or three (`3,2,1`: red, green, blue). Default: bands
    /// 1-3 when they are marked red, green and blue, else band 1.
    pub bands: Option<String>,
    /// `low,high` for every band, or a pair per band (`0,255,0,255,0,180`). Default: each
    /// band's 2nd to 98th percentile (GDAL's approximate histogram).
    pub rescale: Option<String>,
    /// Colour ramp of one band: viridis (default), magma, terrain or greys.
    pub ramp: Option<String>,
    /// nearest (default) or bilinear.
    pub resampling: Option<String>,
}

/// A raster dataset's id, file and description; 404 when `id` is no raster dataset.
async fn find_raster(state: &AppState, id: &str) -> Result<(DatasetRecord, RasterInfo), AppError> {
    let dataset = crate::datasets::lookup::find(state, id).await?;
    if dataset.format != FORMAT {
        return Err(AppError::not_found(format!(
            "dataset {id} is not a raster (its format is {}): its layers are drawn as vector tiles at /ogc/collections/{id}.<layer>/tiles",
            dataset.format
        )));
    }
    let path = std::path::PathBuf::from(&dataset.path);
    let described = blocking(move || Ok(info(&path))).await?;
    let described = described.ok_or_else(|| {
        AppError::new(
            ErrorKind::Internal,
            "raster_unreadable",
            format!("the file of raster {id} can no longer be read"),
        )
    })?;
    Ok((dataset, described))
}

fn raster_error(error: RasterError) -> AppError {
    match error {
        RasterError::Input(message) => AppError::bad_request(message),
        other => AppError::new(ErrorKind::Internal, "raster_unreadable", other.to_string()),
    }
}

fn numbers(name: &str, text: &str) -> Result<Vec<f64>, AppError> {
    text.split(',')
        .map(|part| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .ok_or_else(|| {
                    AppError::bad_request(format!("{name}={text:?}: {part:?} is not a number"))
                })
        })
        .collect()
}

/// The style a query asks for, every default filled in from the raster.
async fn style_of(
    query: &RasterStyleQuery,
    dataset: &DatasetRecord,
    raster: &RasterInfo,
) -> Result<TileStyle, AppError> {
    let bands: Vec<usize> = match &query.bands {
        Some(text) => numbers("bands", text)?
            .into_iter()
            .map(|b| {
                let whole = b as usize;
                let exact = whole as f64 == b;
                exact.then_some(whole).ok_or_else(|| {
                    AppError::bad_request(format!("bands={text:?}: {b} is not a band number"))
                })
            })
            .collect::<Result<_, _>>()?,
        None => {
            let path = std::path::PathBuf::from(&dataset.path);
            blocking(move || Ok(default_bands(&path)))
                .await?
                .map_err(raster_error)?
        }
    };
    if bands.len() != 1 && bands.len() != 3 {
        return Err(AppError::bad_request(format!(
            "bands: {} given; a tile draws one band (with a colour ramp) or three (red, green, blue)",
            bands.len()
        )));
    }
    if let Some(band) = bands.iter().find(|b| **b == 0 || **b > raster.bands.len()) {
        return Err(AppError::bad_request(format!(
            "band {band} is out of range: the raster has {} band(s)",
            raster.bands.len()
        )));
    }
    let ranges = match &query.rescale {
        Some(text) => {
            let values = numbers("rescale", text)?;
            let pairs: Vec<(f64, f64)> = values.chunks(2).map(|p| (p[0], p[p.len() - 1])).collect();
            match (values.len(), pairs.len()) {
                (2, _) => vec![pairs[0]; bands.len()],
                (n, count) if n % 2 == 0 && count == bands.len() => pairs,
                _ => {
                    return Err(AppError::bad_request(format!(
                        "rescale={text:?}: give low,high for every band or a pair per band ({} bands)",
                        bands.len()
                    )));
                }
            }
        }
        None => {
            let (path, wanted) = (std::path::PathBuf::from(&dataset.path), bands.clone());
            blocking(move || Ok(default_ranges(&path, &wanted)))
                .await?
                .map_err(raster_error)?
        }
    };
    let ramp_name = query.ramp.as_deref().unwrap_or("viridis");
    let ramp = Ramp::named(ramp_name).ok_or_else(|| {
        let names: Vec<&str> = Ramp::NAMES.iter().map(|(n, _)| *n).collect();
        AppError::bad_request(format!(
            "ramp={ramp_name:?} is not a colour ramp: one of {}",
            names.join(", ")
        ))
    })?;
    let resampling = match query.resampling.as_deref().unwrap_or("nearest") {
        "nearest" => TileResampling::Nearest,
        "bilinear" => TileResampling::Bilinear,
        other => {
            return Err(AppError::bad_request(format!(
                "resampling={other:?}: nearest or bilinear"
            )));
        }
    };
    Ok(TileStyle {
        bands,
        ranges,
        ramp,
        resampling,
    })
}

/// The query string that draws `style` (every value explicit, so tiles need no histogram).
fn style_query(style: &TileStyle) -> String {
    let bands: Vec<String> = style.bands.iter().map(ToString::to_string).collect();
    let rescale: Vec<String> = style
        .ranges
        .iter()
        .flat_map(|(low, high)| [low.to_string(), high.to_string()])
        .collect();
    let ramp = Ramp::NAMES
        .iter()
        .find(|(_, r)| *r == style.ramp)
        .map_or("viridis", |(n, _)| *n);
    let resampling = match style.resampling {
        TileResampling::Nearest => "nearest",
        TileResampling::Bilinear => "bilinear",
    };
    format!(
        "bands={}&rescale={}&ramp={ramp}&resampling={resampling}",
        bands.join(","),
        rescale.join(",")
    )
}

async fn footprint_of(dataset: &DatasetRecord) -> Result<Footprint, AppError> {
    let path = std::path::PathBuf::from(&dataset.path);
    blocking(move || Ok(footprint(&path)))
        .await?
        .map_err(|e| match e {
            RasterError::Input(message) => AppError::new(
                ErrorKind::Invalid,
                "raster_not_mappable",
                format!("the raster cannot be placed on a web map: {message}"),
            ),
            other => raster_error(other),
        })
}

/// TileJSON 3.0 for a raster's PNG tiles, drawn as the query says; the tile URL carries every
/// style value, defaults resolved.
#[utoipa::path(get, path = "/rasters/{id}/tiles", tag = "datasets",
    params(("id" = String, Path, description = "Raster dataset id"), RasterStyleQuery),
    responses((status = 200, description = "TileJSON (`legend` gives the bands, their ranges and the ramp)", body = Object),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn tilejson(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<RasterStyleQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (dataset, raster) = find_raster(&state, &id).await?;
    let style = style_of(&query, &dataset, &raster).await?;
    let place = footprint_of(&dataset).await?;
    use geomill_backends::store::MAX_TILE_LATITUDE as LIMIT;
    let [west, south, east, north] = place.lonlat;
    let base = base_url(&headers);
    let document = json!({
        "tilejson": "3.0.0",
        "name": dataset.name,
        "tiles": [format!("{base}/rasters/{}/tiles/{{z}}/{{x}}/{{y}}.png?{}", urlencode(&id), style_query(&style))],
        "minzoom": 0,
        "maxzoom": place.native_zoom,
        "bounds": [west.clamp(-180.0, 180.0), south.clamp(-LIMIT, LIMIT),
                   east.clamp(-180.0, 180.0), north.clamp(-LIMIT, LIMIT)],
        "legend": {
            "bands": style.bands,
            "ranges": style.ranges.iter().map(|(l, h)| [l, h]).collect::<Vec<_>>(),
            "ramp": (style.bands.len() == 1).then(|| query.ramp.clone().unwrap_or_else(|| "viridis".into())),
        },
    });
    Ok(typed(JSON, &document))
}

/// Tile z/x/y (`{y}.png`) of a raster: 256 × 256 RGBA in Web Mercator, transparent where the
/// raster has no valid cell; 400 outside the tile matrix or for a style the raster cannot draw.
#[utoipa::path(get, path = "/rasters/{id}/tiles/{z}/{x}/{y}.png", tag = "datasets",
    params(("id" = String, Path, description = "Raster dataset id"), ("z" = u32, Path, description = "Zoom (0 to 22)"),
        ("x" = u32, Path, description = "Column"), ("y" = u32, Path, description = "Row"), RasterStyleQuery),
    responses((status = 200, description = "A PNG tile", content_type = "image/png"),
        (status = 304, description = "Unchanged (If-None-Match)"),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn tile(
    State(state): State<AppState>,
    Path((id, z, x, y)): Path<(String, String, String, String)>,
    ApiQuery(query): ApiQuery<RasterStyleQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let zxy = super::ogc::tiles::tile_index(&z, &x, &y, "png")?;
    let (dataset, raster) = find_raster(&state, &id).await?;
    let style = style_of(&query, &dataset, &raster).await?;
    let key = TileKey {
        table: format!("raster:{}?{}", dataset.id, style_query(&style)),
        version: data_version(&dataset),
        zxy,
    };
    let path = std::path::PathBuf::from(&dataset.path);
    let draw = async move {
        blocking(move || Ok(render(&path, zxy, &style)))
            .await?
            .map_err(raster_error)
    };
    serve_cached(&state, key, &headers, PNG, draw).await
}

/// The map page of a raster alone (the style query as for its tiles).
#[utoipa::path(get, path = "/rasters/{id}/map", tag = "datasets",
    params(("id" = String, Path, description = "Raster dataset id"), RasterStyleQuery),
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn map_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<RasterStyleQuery>,
) -> Result<Html<String>, AppError> {
    let (dataset, raster) = find_raster(&state, &id).await?;
    // Checked here, so that a bad style is a 400 of the page, not a blank map.
    style_of(&query, &dataset, &raster).await?;
    let underlay = underlay(&state, &id, &query).await?;
    let bounds = underlay.bounds;
    Ok(Html(super::ogc::map::page(
        &dataset.name,
        None,
        Some(underlay),
        bounds,
    )))
}

/// A raster drawn under a map page's layers.
pub struct Underlay {
    pub name: String,
    /// Its TileJSON's URL (relative), with the page's style query.
    pub tilejson: String,
    /// Its [west, south, east, north] on the map.
    pub bounds: Option<[f64; 4]>,
}

/// The raster `id` as a map page's underlay; 404 when it is no raster dataset.
pub async fn underlay(
    state: &AppState,
    id: &str,
    query: &RasterStyleQuery,
) -> Result<Underlay, AppError> {
    let (dataset, _) = find_raster(state, id).await?;
    let place = footprint_of(&dataset).await?;
    use geomill_backends::store::MAX_TILE_LATITUDE as LIMIT;
    let [west, south, east, north] = place.lonlat;
    let mut passed = Vec::new();
    for (name, value) in [
        ("bands", &query.bands),
        ("rescale", &query.rescale),
        ("ramp", &query.ramp),
        ("resampling", &query.resampling),
    ] {
        if let Some(value) = value {
            let encoded: String = reqwest::Url::parse_with_params("http://x/", [(name, value)])
                .map(|u| u.query().unwrap_or_default().to_owned())
                .unwrap_or_default();
            passed.push(encoded);
        }
    }
    let query = if passed.is_empty() {
        String::new()
    } else {
        format!("?{}", passed.join("&"))
    };
    Ok(Underlay {
        name: dataset.name,
        tilejson: format!("/rasters/{}/tiles{query}", urlencode(id)),
        bounds: Some([
            west.max(-180.0),
            south.clamp(-LIMIT, LIMIT),
            east.min(180.0),
            north.clamp(-LIMIT, LIMIT),
        ]),
    })
}
