//! A collection's features: pages of items (GeoJSON or HTML) with bbox, CRS and CQL2 filters,
//! and one feature by id.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use geomill_backends::store::{LayerRecord, OutputCrs};
use serde::Deserialize;
use serde_json::{Value, json};

use super::collections::queryable_columns;
use super::crs::{CRS84, parse_crs, with_content_crs};
use super::html::{self, Encoding, negotiate};
use super::wire::{GEOJSON, JSON, base_url, link, resolve, typed, urlencode};
use crate::api::datasets::{MAX_LIMIT, parse_bbox};
use crate::api::extract::ApiQuery;
use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;

/// Items per page unless `limit` says otherwise (the service's page size everywhere).
const DEFAULT_ITEMS: i64 = 100;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ItemsQuery {
    /// Features per page (default 100; more than 10000 is served as 10000). The default and
    /// maximum are in the parameter's schema, where clients (GDAL 3.8+, QGIS) read a page size.
    #[param(minimum = 1, maximum = 10000, default = 100)]
    pub limit: Option<i64>,
    /// Features to skip (default 0).
    #[param(minimum = 0)]
    pub offset: Option<i64>,
    /// `minlon,minlat,maxlon,maxlat` in CRS84.
    pub bbox: Option<String>,
    /// Refused: no layer has a temporal property yet.
    pub datetime: Option<String>,
    /// `json` or `geojson` (default), or `html` (also chosen by a browser's `Accept` header).
    #[param(pattern = "^(json|geojson|html)$")]
    pub f: Option<String>,
    /// The CRS of the answer's coordinates (one of the collection's `crs`; default CRS84).
    pub crs: Option<String>,
    /// The CRS of `bbox` (default CRS84).
    #[serde(rename = "bbox-crs")]
    pub bbox_crs: Option<String>,
    /// A CQL2 filter over the collection's queryables.
    pub filter: Option<String>,
    /// `cql2-text` (default) or `cql2-json`.
    #[serde(rename = "filter-lang")]
    pub filter_lang: Option<String>,
    /// The CRS of the filter's geometries: CRS84 only.
    #[serde(rename = "filter-crs")]
    pub filter_crs: Option<String>,
}

/// The SQL condition of an items request's `filter`, checked against the layer's columns.
async fn filter_condition(
    state: &AppState,
    layer: &LayerRecord,
    query: &ItemsQuery,
) -> Result<Option<String>, AppError> {
    let Some(text) = &query.filter else {
        if query.filter_lang.is_some() || query.filter_crs.is_some() {
            return Err(AppError::bad_request(
                "filter-lang and filter-crs need a filter",
            ));
        }
        return Ok(None);
    };
    if let Some(crs) = &query.filter_crs
        && parse_crs(crs, "filter-crs", layer)? != OutputCrs::Crs84
    {
        return Err(AppError::bad_request(format!(
            "filter-crs: only {CRS84} is supported"
        )));
    }
    let expr = match query.filter_lang.as_deref().unwrap_or("cql2-text") {
        "cql2-text" => geomill_planner::cql2::text::parse(text),
        "cql2-json" => serde_json::from_str(text)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|v| geomill_planner::cql2::from_json(&v)),
        other => {
            return Err(AppError::bad_request(format!(
                "filter-lang={other:?}: use cql2-text or cql2-json"
            )));
        }
    }
    .map_err(|reason| AppError::bad_request(format!("filter: {reason}")))?;
    let columns = queryable_columns(state, layer).await?;
    let names: Vec<String> = columns.iter().map(|(name, _)| name.clone()).collect();
    let geometry = geomill_backends::store::lon_lat_geometry(layer);
    let target = geomill_planner::cql2::Target {
        columns: &names,
        geometry_sql: &geometry,
        dialect: geomill_planner::sql::Dialect::Duckdb,
    };
    geomill_planner::cql2::to_sql(&expr, &target)
        .map(Some)
        .map_err(|reason| AppError::bad_request(format!("filter: {reason}")))
}

/// A page of a collection's features: GeoJSON with `numberMatched`, `numberReturned` and
/// `next`/`prev` links while more exist.
#[utoipa::path(get, path = "/ogc/collections/{id}/items", tag = "ogc", params(ItemsQuery),
    responses((status = 200, description = "GeoJSON FeatureCollection (or HTML)", content((Object = "application/geo+json"), (String = "text/html"))),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn items(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<ItemsQuery>,
) -> Result<Response, AppError> {
    if query.datetime.is_some() {
        return Err(AppError::bad_request(
            "datetime: this collection has no temporal property to filter on",
        ));
    }
    let encoding = negotiate(query.f.as_deref(), &headers, &["json", "geojson"])?;
    let limit = query.limit.unwrap_or(DEFAULT_ITEMS);
    let offset = query.offset.unwrap_or(0);
    if limit < 1 || offset < 0 {
        return Err(AppError::bad_request(
            "limit must be at least 1 and offset at least 0",
        ));
    }
    let limit = limit.min(MAX_LIMIT);
    let bbox = query.bbox.as_deref().map(parse_bbox).transpose()?;
    let (_, layer) = resolve(&state, &id).await?;
    let output = match &query.crs {
        Some(text) => parse_crs(text, "crs", &layer)?,
        None => OutputCrs::Crs84,
    };
    let bbox = match (bbox, &query.bbox_crs) {
        (Some(bbox), Some(text)) => match parse_crs(text, "bbox-crs", &layer)? {
            OutputCrs::Crs84 => Some(bbox),
            OutputCrs::Epsg(_) if bbox[0] > bbox[2] => {
                return Err(AppError::bad_request(
                    "bbox: minx > maxx crosses the antimeridian only in longitudes (CRS84)",
                ));
            }
            OutputCrs::Epsg(code) => {
                let engine = state.store();
                Some(blocking(move || engine.bbox_to_crs84(bbox, code)).await?)
            }
        },
        (None, Some(_)) => return Err(AppError::bad_request("bbox-crs is given without bbox")),
        (bbox, None) => bbox,
    };
    let condition = filter_condition(&state, &layer, &query).await?;
    let page = if condition.is_none() && output == OutputCrs::Crs84 {
        crate::api::datasets::lon_lat_page(&state, layer, bbox, (limit, offset)).await?
    } else {
        filtered_page(&state, layer, bbox, condition, (limit, offset), output).await?
    };
    let features = crate::api::datasets::page_features(&page)?;
    let base = base_url(&headers);
    let page_link = |offset: i64, rel: &str| {
        let mut href = format!(
            "{base}/ogc/collections/{}/items?limit={limit}&offset={offset}",
            urlencode(&id)
        );
        for (name, value) in [
            ("bbox", &query.bbox),
            ("bbox-crs", &query.bbox_crs),
            ("crs", &query.crs),
            ("filter", &query.filter),
            ("filter-lang", &query.filter_lang),
            ("filter-crs", &query.filter_crs),
        ] {
            if let Some(value) = value {
                href.push_str(&format!("&{name}={}", urlencode(value.trim())));
            }
        }
        link(href, rel, GEOJSON, rel)
    };
    let mut links = vec![page_link(offset, "self")];
    if offset + limit < page.total {
        links.push(page_link(offset + limit, "next"));
    }
    if offset > 0 {
        links.push(page_link((offset - limit).max(0), "prev"));
    }
    let document = json!({
        "type": "FeatureCollection",
        "numberMatched": page.total,
        "numberReturned": features.len(),
        "timeStamp": crate::timestamp::now(),
        "features": features,
        "links": links,
    });
    let body = match encoding {
        Encoding::Html => html::items(&id, &document),
        Encoding::Json => typed(GEOJSON, &document),
    };
    Ok(with_content_crs(output, body))
}

/// One feature by id.
#[utoipa::path(get, path = "/ogc/collections/{id}/items/{feature_id}", tag = "ogc", params(ItemQuery),
    responses((status = 200, description = "GeoJSON Feature (or HTML)", content((Object = "application/geo+json"), (String = "text/html"))),
        (status = 400, description = "An unknown `crs` or `f`, or a malformed query string", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn item(
    State(state): State<AppState>,
    Path((id, feature_id)): Path<(String, String)>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<ItemQuery>,
) -> Result<Response, AppError> {
    let encoding = negotiate(query.f.as_deref(), &headers, &["json", "geojson"])?;
    let missing = || AppError::not_found(format!("collection {id} has no feature {feature_id:?}"));
    let number: i64 = feature_id.parse().map_err(|_| missing())?;
    let (_, layer) = resolve(&state, &id).await?;
    let output = match &query.crs {
        Some(text) => parse_crs(text, "crs", &layer)?,
        None => OutputCrs::Crs84,
    };
    let engine = state.store();
    let text = blocking(move || engine.feature(&layer, number, output))
        .await?
        .ok_or_else(missing)?;
    let mut feature: Value = serde_json::from_str(&text).map_err(|e| AppError::internal(&e))?;
    let base = base_url(&headers);
    let collection = format!("{base}/ogc/collections/{}", urlencode(&id));
    feature["links"] = json!([
        link(
            format!("{collection}/items/{feature_id}"),
            "self",
            GEOJSON,
            "This feature"
        ),
        link(collection, "collection", JSON, "The collection"),
    ]);
    let body = match encoding {
        Encoding::Html => html::item(&id, &feature),
        Encoding::Json => typed(GEOJSON, &feature),
    };
    Ok(with_content_crs(output, body))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ItemQuery {
    /// The CRS of the answer's coordinates (default CRS84).
    pub crs: Option<String>,
    /// `json` or `geojson` (default), or `html`.
    #[param(pattern = "^(json|geojson|html)$")]
    pub f: Option<String>,
}

/// A page read by the embedded engine: with a filter condition or in another CRS.
async fn filtered_page(
    state: &AppState,
    layer: geomill_backends::store::LayerRecord,
    bbox: Option<[f64; 4]>,
    condition: Option<String>,
    (limit, offset): (i64, i64),
    output: OutputCrs,
) -> Result<geomill_backends::store::FeaturePage, AppError> {
    let engine = state.store();
    let filtered = condition.is_some();
    tokio::task::spawn_blocking(move || {
        engine.features_in(&layer, bbox, condition.as_deref(), (limit, offset), output)
    })
    .await
    .map_err(|e| AppError::internal(&e))?
    .map_err(|error| match error {
        // The filter's literals reach the engine only here (a WKT it cannot read, a comparison
        // of a text column with a number): the request's fault.
        geomill_backends::BackendError::Query { reason, .. } if filtered => {
            AppError::bad_request(format!("filter cannot be evaluated: {reason}"))
        }
        other => AppError::from(other),
    })
}
