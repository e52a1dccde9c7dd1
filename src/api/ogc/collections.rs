//! The OGC API's descriptive resources: landing page, conformance, the collections, one
//! collection, and its queryables; each as JSON or, for a browser, HTML.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use geomill_backends::store::{DatasetRecord, LayerRecord};
use geomill_planner::schema::FieldType;
use serde::Deserialize;
use serde_json::{Value, json};

use super::crs::{CRS84, crs_uri, storage_crs, supported_crs};
use super::html::{self, Encoding, negotiate};
use super::wire::{GEOJSON, HTML, JSON, base_url, layers, link, resolve, typed, urlencode};
use crate::api::extract::ApiQuery;
use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;

/// The query of the descriptive resources: only the encoding.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FormatQuery {
    /// `json` (default) or `html` (also chosen by a browser's `Accept` header).
    #[param(pattern = "^(json|html)$")]
    pub f: Option<String>,
}

fn encoding(query: &FormatQuery, headers: &HeaderMap) -> Result<Encoding, AppError> {
    negotiate(query.f.as_deref(), headers, &["json"])
}

/// The landing page.
#[utoipa::path(get, path = "/ogc", tag = "ogc", params(FormatQuery),
    responses((status = 200, description = "Landing page (JSON or HTML)", content((Object = "application/json"), (String = "text/html"))),
        (status = 400, body = crate::api::error::ErrorBody)))]
pub async fn landing(
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<FormatQuery>,
) -> Result<Response, AppError> {
    let base = base_url(&headers);
    let document = json!({
        "title": "geomill",
        "description": "Every dataset layer as an OGC API Features collection, with vector tiles.",
        "links": [
            link(format!("{base}/ogc"), "self", JSON, "This document"),
            link(format!("{base}/ogc?f=html"), "alternate", HTML, "This document as HTML"),
            link(format!("{base}/openapi.json"), "service-desc", "application/vnd.oai.openapi+json;version=3.1", "The API definition"),
            link(format!("{base}/docs"), "service-doc", HTML, "The API documentation"),
            link(format!("{base}/ogc/conformance"), "conformance", JSON, "Conformance classes"),
            link(format!("{base}/ogc/collections"), "data", JSON, "The collections"),
        ],
    });
    Ok(match encoding(&query, &headers)? {
        Encoding::Html => html::landing(&document),
        Encoding::Json => typed(JSON, &document),
    })
}

/// The conformance classes implemented: Part 1 core, GeoJSON and HTML, Part 2 CRS by
/// reference, Part 3 filtering with CQL2 text and JSON.
#[utoipa::path(get, path = "/ogc/conformance", tag = "ogc", params(FormatQuery),
    responses((status = 200, description = "Conformance classes (JSON or HTML)", content((Object = "application/json"), (String = "text/html"))),
        (status = 400, body = crate::api::error::ErrorBody)))]
pub async fn conformance(
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<FormatQuery>,
) -> Result<Response, AppError> {
    let document = json!({"conformsTo": [
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html",
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
    ]});
    Ok(match encoding(&query, &headers)? {
        Encoding::Html => html::conformance(&document),
        Encoding::Json => typed(JSON, &document),
    })
}

async fn describe(
    state: &AppState,
    base: &str,
    dataset: &DatasetRecord,
    layer: &LayerRecord,
) -> Result<Value, AppError> {
    let id = format!("{}.{}", dataset.id, layer.name);
    let unfetched = dataset
        .remote
        .as_ref()
        .is_some_and(|r| r.loaded_at.is_none());
    let extent = if unfetched {
        None
    } else {
        let engine = state.store();
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
            link(href("?f=html"), "alternate", HTML, "This collection as HTML"),
            link(href("/items"), "items", GEOJSON, "The features"),
            link(href("/items?f=html"), "items", HTML, "The features as HTML"),
            link(href("/tiles"), "tiles", JSON, "TileJSON of the vector tiles"),
            link(href("/map"), "related", HTML, "A map of the collection"),
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

/// Every collection.
#[utoipa::path(get, path = "/ogc/collections", tag = "ogc", params(FormatQuery),
    responses((status = 200, description = "The collections (JSON or HTML)", content((Object = "application/json"), (String = "text/html"))),
        (status = 400, body = crate::api::error::ErrorBody)))]
pub async fn collections(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<FormatQuery>,
) -> Result<Response, AppError> {
    let encoding = encoding(&query, &headers)?;
    let base = base_url(&headers);
    let mut described = Vec::new();
    for (dataset, layer) in layers(&state).await? {
        described.push(describe(&state, &base, &dataset, &layer).await?);
    }
    let document = json!({
        "links": [
            link(format!("{base}/ogc/collections"), "self", JSON, "The collections"),
            link(format!("{base}/ogc/collections?f=html"), "alternate", HTML, "The collections as HTML"),
        ],
        "collections": described,
    });
    Ok(match encoding {
        Encoding::Html => html::collections(&document),
        Encoding::Json => typed(JSON, &document),
    })
}

/// One collection.
#[utoipa::path(get, path = "/ogc/collections/{id}", tag = "ogc", params(FormatQuery),
    responses((status = 200, description = "The collection (JSON or HTML)", content((Object = "application/json"), (String = "text/html"))),
        (status = 400, body = crate::api::error::ErrorBody), (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn collection(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<FormatQuery>,
) -> Result<Response, AppError> {
    let encoding = encoding(&query, &headers)?;
    let (dataset, layer) = resolve(&state, &id).await?;
    let document = describe(&state, &base_url(&headers), &dataset, &layer).await?;
    Ok(match encoding {
        Encoding::Html => html::collection(&document),
        Encoding::Json => typed(JSON, &document),
    })
}

/// The layer's attribute columns and their JSON Schema types.
pub(super) async fn queryable_columns(
    state: &AppState,
    layer: &LayerRecord,
) -> Result<Vec<(String, &'static str)>, AppError> {
    let engine = state.store();
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
    responses((status = 200, description = "A JSON Schema", content_type = "application/schema+json", body = Object),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn queryables(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
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
