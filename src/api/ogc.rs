//! OGC API Features (Part 1: core, GeoJSON) over every dataset layer, and Mapbox Vector Tiles
//! with a TileJSON document per collection. A collection's id is `<dataset id>.<layer name>`, so
//! it stays the same across renames.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use geomill_backends::duckdb::{DatasetRecord, LayerRecord, OutputCrs};
use geomill_planner::schema::FieldType;
use serde::Deserialize;
use serde_json::{Value, json};

use super::datasets::{MAX_LIMIT, blocking, parse_bbox};
use super::extract::ApiQuery;
use crate::error::ApiError;
use crate::state::AppState;
use crate::tile_cache::TileKey;

const GEOJSON: &str = "application/geo+json";
const JSON: &str = "application/json";
const MVT: &str = "application/vnd.mapbox-vector-tile";
const CRS84: &str = "http://www.opengis.net/def/crs/OGC/1.3/CRS84";
/// How long clients and proxies may keep a tile: data only changes when it is reloaded, which
/// changes the ETag.
const TILE_CACHE_CONTROL: &str = "public, max-age=300";
/// Highest zoom level served.
const MAX_ZOOM: u32 = 22;
/// Items per page unless `limit` says otherwise (the standard's example value).
const DEFAULT_ITEMS: i64 = 10;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ogc", get(landing))
        .route("/ogc/conformance", get(conformance))
        .route("/ogc/collections", get(collections))
        .route("/ogc/collections/{id}", get(collection))
        .route("/ogc/collections/{id}/items", get(items))
        .route("/ogc/collections/{id}/queryables", get(queryables))
        .route("/ogc/collections/{id}/items/{feature_id}", get(item))
        .route("/ogc/collections/{id}/tiles", get(tilejson))
        .route("/ogc/collections/{id}/tiles/{z}/{x}/{y}", get(tile))
}

/// The address clients reach this server at, from the request (`X-Forwarded-Proto` honoured).
fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .filter(|p| *p == "https")
        .unwrap_or("http");
    format!("{scheme}://{host}")
}

fn typed(content_type: &'static str, body: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.to_string(),
    )
        .into_response()
}

fn link(href: String, rel: &str, kind: &str, title: &str) -> Value {
    json!({"href": href, "rel": rel, "type": kind, "title": title})
}

/// The landing page.
#[utoipa::path(get, path = "/ogc", tag = "ogc", responses((status = 200, description = "Landing page", body = Object)))]
pub async fn landing(headers: HeaderMap) -> Response {
    let base = base_url(&headers);
    typed(
        JSON,
        &json!({
            "title": "geomill",
            "description": "Every dataset layer as an OGC API Features collection, with vector tiles.",
            "links": [
                link(format!("{base}/ogc"), "self", JSON, "This document"),
                link(format!("{base}/openapi.json"), "service-desc", "application/vnd.oai.openapi+json;version=3.1", "The API definition"),
                link(format!("{base}/docs"), "service-doc", "text/html", "The API documentation"),
                link(format!("{base}/ogc/conformance"), "conformance", JSON, "Conformance classes"),
                link(format!("{base}/ogc/collections"), "data", JSON, "The collections"),
            ],
        }),
    )
}

/// The conformance classes implemented: Part 1 core and GeoJSON, Part 2 CRS by reference,
/// Part 3 filtering with CQL2 text and JSON.
#[utoipa::path(get, path = "/ogc/conformance", tag = "ogc", responses((status = 200, body = Object)))]
pub async fn conformance() -> Response {
    typed(
        JSON,
        &json!({"conformsTo": [
            "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
            "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
            "http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs",
            "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
            "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
            "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
            "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
            "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
            "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
            "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
            "http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
            "http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
            "http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions",
        ]}),
    )
}

/// Every (dataset, layer) pair, in dataset order.
async fn layers(state: &AppState) -> Result<Vec<(DatasetRecord, LayerRecord)>, ApiError> {
    Ok(crate::execute::all_datasets(state)
        .await?
        .into_iter()
        .flat_map(|d| d.layers.clone().into_iter().map(move |l| (d.clone(), l)))
        .collect())
}

/// The dataset and layer a collection id names, the layer's features loaded.
pub(crate) async fn resolve(
    state: &AppState,
    id: &str,
) -> Result<(DatasetRecord, LayerRecord), ApiError> {
    let not_found = || ApiError::not_found(format!("no collection {id:?} (see /ogc/collections)"));
    let (dataset_id, layer) = id.split_once('.').ok_or_else(not_found)?;
    if uuid::Uuid::parse_str(dataset_id).is_err() {
        return Err(not_found());
    }
    let layer = super::datasets::find_layer(state, dataset_id, layer)
        .await
        .map_err(|e| {
            if e.status == StatusCode::NOT_FOUND {
                not_found()
            } else {
                e
            }
        })?;
    let dataset = layers(state)
        .await?
        .into_iter()
        .find(|(d, _)| d.id == dataset_id)
        .map(|(d, _)| d)
        .ok_or_else(not_found)?;
    Ok((dataset, layer))
}

/// The URI of a CRS as OGC API names it.
fn crs_uri(crs: OutputCrs) -> String {
    match crs {
        OutputCrs::Crs84 => CRS84.to_owned(),
        OutputCrs::Epsg(code) => format!("http://www.opengis.net/def/crs/EPSG/0/{code}"),
    }
}

/// The CRS the layer's coordinates are kept in (lon/lat layers: CRS84, their axis order).
fn storage_crs(layer: &LayerRecord) -> OutputCrs {
    match layer
        .crs
        .as_deref()
        .and_then(|c| c.strip_prefix("EPSG:"))
        .and_then(|n| n.parse::<u32>().ok())
    {
        None | Some(4326) => OutputCrs::Crs84,
        Some(code) => OutputCrs::Epsg(code),
    }
}

/// The CRSs a collection's features can be asked in: CRS84, EPSG:4326 (lat/lon), Web
/// Mercator, and the storage CRS.
fn supported_crs(layer: &LayerRecord) -> Vec<OutputCrs> {
    let mut list = vec![
        OutputCrs::Crs84,
        OutputCrs::Epsg(4326),
        OutputCrs::Epsg(3857),
    ];
    let storage = storage_crs(layer);
    if !list.contains(&storage) {
        list.push(storage);
    }
    list
}

/// A `crs` or `bbox-crs` value: one of the collection's CRS URIs (or `EPSG:<n>`, `OGC:CRS84`).
fn parse_crs(text: &str, parameter: &str, layer: &LayerRecord) -> Result<OutputCrs, ApiError> {
    let supported = supported_crs(layer);
    let parsed = if text == CRS84 || text == "OGC:CRS84" || text == "[OGC:CRS84]" {
        Some(OutputCrs::Crs84)
    } else {
        text.strip_prefix("http://www.opengis.net/def/crs/EPSG/0/")
            .or_else(|| text.strip_prefix("EPSG:"))
            .or_else(|| {
                text.strip_prefix("[EPSG:")
                    .and_then(|t| t.strip_suffix(']'))
            })
            .and_then(|n| n.parse().ok())
            .map(OutputCrs::Epsg)
    };
    parsed.filter(|c| supported.contains(c)).ok_or_else(|| {
        ApiError::bad_request(format!(
            "{parameter}={text:?} is not offered by this collection; use one of {}",
            supported
                .iter()
                .map(|c| crs_uri(*c))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

async fn describe(
    state: &AppState,
    base: &str,
    dataset: &DatasetRecord,
    layer: &LayerRecord,
) -> Result<Value, ApiError> {
    let id = format!("{}.{}", dataset.id, layer.name);
    let unfetched = dataset
        .remote
        .as_ref()
        .is_some_and(|r| r.loaded_at.is_none());
    let extent = if unfetched {
        None
    } else {
        let engine = state.embedded();
        let record = layer.clone();
        blocking(move || engine.layer_extent(&record)).await?
    };
    let href = |path: &str| format!("{base}/ogc/collections/{}{path}", urlencode(&id));
    let mut described = json!({
        "id": id,
        "title": format!("{} / {}", dataset.name, layer.name),
        "itemType": "feature",
        "crs": supported_crs(layer).into_iter().map(crs_uri).collect::<Vec<_>>(),
        "storageCrs": crs_uri(storage_crs(layer)),
        "links": [
            link(href(""), "self", JSON, "This collection"),
            link(href("/items"), "items", GEOJSON, "The features"),
            link(href("/tiles"), "tiles", JSON, "TileJSON of the vector tiles"),
            link(
                href("/queryables"),
                "http://www.opengis.net/def/rel/ogc/1.0/queryables",
                "application/schema+json",
                "What a filter may use",
            ),
        ],
    });
    if let Some(bbox) = extent {
        described["extent"] = json!({"spatial": {"bbox": [bbox], "crs": CRS84}});
    }
    Ok(described)
}

/// A path segment with what URLs reserve escaped.
pub(crate) fn urlencode(segment: &str) -> String {
    let mut url = reqwest::Url::parse("http://x/").unwrap_or_else(|_| unreachable!("a valid URL"));
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.push(segment);
    }
    url.path().trim_start_matches('/').to_owned()
}

/// Every collection.
#[utoipa::path(get, path = "/ogc/collections", tag = "ogc", responses((status = 200, body = Object)))]
pub async fn collections(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let base = base_url(&headers);
    let mut described = Vec::new();
    for (dataset, layer) in layers(&state).await? {
        described.push(describe(&state, &base, &dataset, &layer).await?);
    }
    Ok(typed(
        JSON,
        &json!({
            "links": [link(format!("{base}/ogc/collections"), "self", JSON, "The collections")],
            "collections": described,
        }),
    ))
}

/// One collection.
#[utoipa::path(get, path = "/ogc/collections/{id}", tag = "ogc",
    responses((status = 200, body = Object), (status = 404, body = crate::error::ErrorBody)))]
pub async fn collection(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (dataset, layer) = resolve(&state, &id).await?;
    Ok(typed(
        JSON,
        &describe(&state, &base_url(&headers), &dataset, &layer).await?,
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ItemsQuery {
    /// Features per page (default 10; more than 10000 is served as 10000).
    pub limit: Option<i64>,
    /// Features to skip (default 0).
    pub offset: Option<i64>,
    /// `minlon,minlat,maxlon,maxlat` in CRS84.
    pub bbox: Option<String>,
    /// Refused: no layer has a temporal property yet.
    pub datetime: Option<String>,
    /// `json` or `geojson` (the only encoding).
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
) -> Result<Option<String>, ApiError> {
    let Some(text) = &query.filter else {
        if query.filter_lang.is_some() || query.filter_crs.is_some() {
            return Err(ApiError::bad_request(
                "filter-lang and filter-crs need a filter",
            ));
        }
        return Ok(None);
    };
    if let Some(crs) = &query.filter_crs
        && parse_crs(crs, "filter-crs", layer)? != OutputCrs::Crs84
    {
        return Err(ApiError::bad_request(format!(
            "filter-crs: only {CRS84} is supported"
        )));
    }
    let expr = match query.filter_lang.as_deref().unwrap_or("cql2-text") {
        "cql2-text" => crate::cql2::text::parse(text),
        "cql2-json" => serde_json::from_str(text)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|v| crate::cql2::from_json(&v)),
        other => {
            return Err(ApiError::bad_request(format!(
                "filter-lang={other:?}: use cql2-text or cql2-json"
            )));
        }
    }
    .map_err(|reason| ApiError::bad_request(format!("filter: {reason}")))?;
    let columns = queryable_columns(state, layer).await?;
    let names: Vec<String> = columns.iter().map(|(name, _)| name.clone()).collect();
    let geometry = geomill_backends::duckdb::lon_lat_geometry(layer);
    let target = crate::cql2::Target {
        columns: &names,
        geometry_sql: &geometry,
    };
    crate::cql2::to_sql(&expr, &target)
        .map(Some)
        .map_err(|reason| ApiError::bad_request(format!("filter: {reason}")))
}

/// The layer's attribute columns and their JSON Schema types.
async fn queryable_columns(
    state: &AppState,
    layer: &LayerRecord,
) -> Result<Vec<(String, &'static str)>, ApiError> {
    let engine = state.embedded();
    let record = layer.clone();
    let schema = blocking(move || engine.layer_schema(&record)).await?;
    Ok(schema
        .columns
        .iter()
        .filter(|c| c.name != "geom")
        .map(|c| {
            let kind = match c.ty {
                FieldType::Integer => "integer",
                FieldType::Double => "number",
                FieldType::Boolean => "boolean",
                _ => "string",
            };
            (c.name.clone(), kind)
        })
        .collect())
}

/// The properties a filter may use, as a JSON Schema.
#[utoipa::path(get, path = "/ogc/collections/{id}/queryables", tag = "ogc",
    responses((status = 200, description = "application/schema+json", body = Object), (status = 404, body = crate::error::ErrorBody)))]
pub async fn queryables(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (_, layer) = resolve(&state, &id).await?;
    let mut properties = serde_json::Map::new();
    properties.insert(
        "geometry".into(),
        json!({"format": "geometry-any", "description": "The feature's geometry, in CRS84"}),
    );
    for (name, kind) in queryable_columns(&state, &layer).await? {
        properties.insert(name.clone(), json!({"title": name, "type": kind}));
    }
    let base = base_url(&headers);
    Ok(typed(
        "application/schema+json",
        &json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": format!("{base}/ogc/collections/{}/queryables", urlencode(&id)),
            "type": "object",
            "title": id,
            "properties": properties,
            "additionalProperties": false,
        }),
    ))
}

/// A page of a collection's features: GeoJSON with `numberMatched`, `numberReturned` and
/// `next`/`prev` links while more exist.
#[utoipa::path(get, path = "/ogc/collections/{id}/items", tag = "ogc", params(ItemsQuery),
    responses((status = 200, description = "GeoJSON FeatureCollection", body = Object),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn items(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<ItemsQuery>,
) -> Result<Response, ApiError> {
    if query.datetime.is_some() {
        return Err(ApiError::bad_request(
            "datetime: this collection has no temporal property to filter on",
        ));
    }
    if let Some(f) = query.f.as_deref()
        && !matches!(f, "json" | "geojson")
    {
        return Err(ApiError::bad_request(format!(
            "f={f:?}: only json (GeoJSON) is served"
        )));
    }
    let limit = query.limit.unwrap_or(DEFAULT_ITEMS);
    let offset = query.offset.unwrap_or(0);
    if limit < 1 || offset < 0 {
        return Err(ApiError::bad_request(
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
            OutputCrs::Epsg(code) => {
                let engine = state.embedded();
                Some(blocking(move || engine.bbox_to_crs84(bbox, code)).await?)
            }
        },
        (None, Some(_)) => return Err(ApiError::bad_request("bbox-crs is given without bbox")),
        (bbox, None) => bbox,
    };
    let condition = filter_condition(&state, &layer, &query).await?;
    let engine = state.embedded();
    let filtered = condition.is_some();
    let page = tokio::task::spawn_blocking(move || {
        engine.features_in(&layer, bbox, condition.as_deref(), (limit, offset), output)
    })
    .await
    .map_err(|e| ApiError::internal(&e))?
    .map_err(|error| match error {
        // The filter's literals reach the engine only here (a WKT it cannot read, a comparison
        // of a text column with a number): the request's fault.
        geomill_backends::BackendError::Query { reason, .. } if filtered => {
            ApiError::bad_request(format!("filter cannot be evaluated: {reason}"))
        }
        other => ApiError::internal(&other),
    })?;
    let features: Vec<Value> = page
        .features
        .iter()
        .map(|f| serde_json::from_str(f).map_err(|e| ApiError::internal(&e)))
        .collect::<Result<_, _>>()?;
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
    Ok(with_content_crs(
        output,
        typed(
            GEOJSON,
            &json!({
                "type": "FeatureCollection",
                "numberMatched": page.total,
                "numberReturned": features.len(),
                "timeStamp": crate::timestamp::now(),
                "features": features,
                "links": links,
            }),
        ),
    ))
}

/// `response` with the `Content-Crs` header Part 2 asks for.
fn with_content_crs(crs: OutputCrs, mut response: Response) -> Response {
    if let Ok(value) = HeaderValue::from_str(&format!("<{}>", crs_uri(crs))) {
        response.headers_mut().insert("content-crs", value);
    }
    response
}

/// One feature by id.
#[utoipa::path(get, path = "/ogc/collections/{id}/items/{feature_id}", tag = "ogc",
    responses((status = 200, description = "GeoJSON Feature", body = Object), (status = 404, body = crate::error::ErrorBody)))]
pub async fn item(
    State(state): State<AppState>,
    Path((id, feature_id)): Path<(String, String)>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<ItemQuery>,
) -> Result<Response, ApiError> {
    let missing = || ApiError::not_found(format!("collection {id} has no feature {feature_id:?}"));
    let number: i64 = feature_id.parse().map_err(|_| missing())?;
    let (_, layer) = resolve(&state, &id).await?;
    let output = match &query.crs {
        Some(text) => parse_crs(text, "crs", &layer)?,
        None => OutputCrs::Crs84,
    };
    let engine = state.embedded();
    let text = blocking(move || engine.feature(&layer, number, output))
        .await?
        .ok_or_else(missing)?;
    let mut feature: Value = serde_json::from_str(&text).map_err(|e| ApiError::internal(&e))?;
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
    Ok(with_content_crs(output, typed(GEOJSON, &feature)))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ItemQuery {
    /// The CRS of the answer's coordinates (default CRS84).
    pub crs: Option<String>,
    /// `json` or `geojson`.
    pub f: Option<String>,
}

/// TileJSON 3.0 for the collection's vector tiles.
#[utoipa::path(get, path = "/ogc/collections/{id}/tiles", tag = "ogc",
    responses((status = 200, description = "TileJSON", body = Object), (status = 404, body = crate::error::ErrorBody)))]
pub async fn tilejson(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (_, layer) = resolve(&state, &id).await?;
    let engine = state.embedded();
    let (record, schema_layer) = (layer.clone(), layer.clone());
    let bounds = blocking(move || engine.layer_extent(&record)).await?;
    let engine = state.embedded();
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
    if let Some(bounds) = bounds {
        document["bounds"] = json!(bounds);
    }
    Ok(typed(JSON, &document))
}

/// Tile z/x/y (`{y}.mvt`) as a Mapbox Vector Tile in Web Mercator, one layer named after the
/// dataset layer; 204 when no feature touches it, 400 outside the tile matrix.
#[utoipa::path(get, path = "/ogc/collections/{id}/tiles/{z}/{x}/{y}.mvt", tag = "ogc",
    responses((status = 200, description = "application/vnd.mapbox-vector-tile"), (status = 204, description = "Empty tile"),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn tile(
    State(state): State<AppState>,
    Path((id, z, x, y)): Path<(String, String, String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let y = y.strip_suffix(".mvt").ok_or_else(|| {
        ApiError::bad_request(format!("tile {y:?}: tiles are served as {{y}}.mvt"))
    })?;
    let number = |name: &str, text: &str| {
        text.parse::<u32>()
            .map_err(|_| ApiError::bad_request(format!("{name}={text:?} is not a tile index")))
    };
    let (z, x, y) = (number("z", &z)?, number("x", &x)?, number("y", y)?);
    if z > MAX_ZOOM {
        return Err(ApiError::bad_request(format!(
            "z={z}: zoom levels go from 0 to {MAX_ZOOM}"
        )));
    }
    let size = 1_u32 << z;
    if x >= size || y >= size {
        return Err(ApiError::bad_request(format!(
            "tile {z}/{x}/{y} is outside the tile matrix (x and y below {size} at zoom {z})"
        )));
    }
    let (dataset, layer) = resolve(&state, &id).await?;
    let key = TileKey {
        table: layer.table_name.clone(),
        version: data_version(&dataset),
        zxy: (z, x, y),
    };
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
            let engine = state.embedded();
            let name = layer.name.clone();
            let bytes =
                std::sync::Arc::new(blocking(move || engine.tile(&layer, &name, (z, x, y))).await?);
            state.tiles().put(key, bytes.clone());
            bytes
        }
    };
    if bytes.is_empty() {
        return Ok((StatusCode::NO_CONTENT, cached).into_response());
    }
    Ok((
        cached,
        [(header::CONTENT_TYPE, MVT.to_owned())],
        bytes.as_ref().clone(),
    )
        .into_response())
}

/// A dataset's data changes only when it is loaded (a remote layer: when it is fetched).
fn data_version(dataset: &DatasetRecord) -> String {
    let fetched = dataset
        .remote
        .as_ref()
        .and_then(|r| r.loaded_at.clone())
        .unwrap_or_default();
    format!("{}|{fetched}", dataset.created_at)
}
