//! What every OGC API answer shares: media types, links, the server's own address, and the
//! lookup of a collection id to its dataset and layer.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use geomill_backends::store::{DatasetRecord, LayerRecord};
use serde_json::{Value, json};

use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

pub const GEOJSON: &str = "application/geo+json";
pub const JSON: &str = "application/json";
pub const HTML: &str = "text/html";

/// The address clients reach this server at, from the request (`X-Forwarded-Proto` honoured).
pub fn base_url(headers: &HeaderMap) -> String {
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

/// `body` as JSON text under `content_type`.
pub fn typed(content_type: &'static str, body: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.to_string(),
    )
        .into_response()
}

pub fn link(href: String, rel: &str, kind: &str, title: &str) -> Value {
    json!({"href": href, "rel": rel, "type": kind, "title": title})
}

/// A path segment with what URLs reserve escaped.
pub(crate) fn urlencode(segment: &str) -> String {
    let mut url = reqwest::Url::parse("http://x/").unwrap_or_else(|_| unreachable!("a valid URL"));
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.push(segment);
    }
    url.path().trim_start_matches('/').to_owned()
}

/// Every (dataset, layer) pair, in dataset order.
pub async fn layers(state: &AppState) -> Result<Vec<(DatasetRecord, LayerRecord)>, AppError> {
    Ok(crate::execute::all_datasets(state)
        .await?
        .into_iter()
        .flat_map(|d| d.layers.clone().into_iter().map(move |l| (d.clone(), l)))
        .collect())
}

/// The dataset and layer a collection id names, the layer's features loaded (a remote layer is
/// fetched on first use). One catalog lookup: this is on the path of every tile.
pub(crate) async fn resolve(
    state: &AppState,
    id: &str,
) -> Result<(DatasetRecord, LayerRecord), AppError> {
    let not_found = || AppError::not_found(format!("no collection {id:?} (see /ogc/collections)"));
    let (dataset_id, layer_name) = id.split_once('.').ok_or_else(not_found)?;
    if uuid::Uuid::parse_str(dataset_id).is_err() {
        return Err(not_found());
    }
    crate::datasets::loaded_layer::find_dataset_layer(state, dataset_id, layer_name)
        .await
        .map_err(|e| {
            if e.kind == ErrorKind::NotFound {
                not_found()
            } else {
                e
            }
        })
}

/// A dataset's data changes only when it is loaded (a remote layer: when it is fetched).
pub fn data_version(dataset: &DatasetRecord) -> String {
    let fetched = dataset
        .remote
        .as_ref()
        .and_then(|r| r.loaded_at.clone())
        .unwrap_or_default();
    format!("{}|{fetched}", dataset.created_at)
}
