//! OGC API Features Part 2: the CRSs a collection offers, their URIs, and reading `crs`,
//! `bbox-crs` and `filter-crs` values.

use axum::http::HeaderValue;
use axum::response::Response;
use geomill_backends::store::{LayerRecord, OutputCrs};

use crate::error::AppError;

pub const CRS84: &str = "http://www.opengis.net/def/crs/OGC/1.3/CRS84";

/// The URI of a CRS as OGC API names it.
pub fn crs_uri(crs: OutputCrs) -> String {
    match crs {
        OutputCrs::Crs84 => CRS84.to_owned(),
        OutputCrs::Epsg(code) => format!("http://www.opengis.net/def/crs/EPSG/0/{code}"),
    }
}

/// The CRS the layer's coordinates are kept in (lon/lat layers: CRS84, their axis order).
pub fn storage_crs(layer: &LayerRecord) -> OutputCrs {
    match layer.epsg_code() {
        None | Some(4326) => OutputCrs::Crs84,
        Some(code) => OutputCrs::Epsg(code),
    }
}

/// The CRSs a collection's features can be asked in: CRS84, EPSG:4326 (lat/lon), Web
/// Mercator, and the storage CRS.
pub fn supported_crs(layer: &LayerRecord) -> Vec<OutputCrs> {
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
pub fn parse_crs(text: &str, parameter: &str, layer: &LayerRecord) -> Result<OutputCrs, AppError> {
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
        AppError::bad_request(format!(
            "{parameter}={text:?} is not offered by this collection; use one of {}",
            supported
                .iter()
                .map(|c| crs_uri(*c))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// `response` with the `Content-Crs` header Part 2 asks for.
pub fn with_content_crs(crs: OutputCrs, mut response: Response) -> Response {
    if let Ok(value) = HeaderValue::from_str(&format!("<{}>", crs_uri(crs))) {
        response.headers_mut().insert("content-crs", value);
    }
    response
}
