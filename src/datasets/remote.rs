//! Lazily registered remote layers: a WFS feature type or an OGC API Features collection is
//! checked (its description only) and recorded on registration; its features are fetched into
//! the dataset's folder through the request-forgery guard, and loaded, when first used.

use std::path::{Path, PathBuf};

use geomill_backends::store::{DatasetRecord, RemoteLayer};
use reqwest::Url;
use serde_json::Value;

use super::fetch::{self, UrlPolicy};
use super::{inspect, upload};
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// Features asked for per OGC API page.
const PAGE_SIZE: usize = 1000;
/// Largest service description read at registration.
const DESCRIPTION_LIMIT: u64 = 4 << 20;
/// Most OGC API pages one load follows.
const MAX_PAGES: usize = 10_000;
/// Longest load of a remote layer's features, all pages together.
const LOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1800);

/// The kinds of remote service a layer can come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Wfs,
    OgcApiFeatures,
}

impl Service {
    /// `WFS`, or OGC API Features as `OAPIF`, `OGCAPI`, `OGC API - Features` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        let compact: String = text
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        match compact.as_str() {
            "wfs" => Some(Self::Wfs),
            "oapif" | "ogcapi" | "ogcapifeatures" | "features" => Some(Self::OgcApiFeatures),
            _ => None,
        }
    }

    /// The label kept as the dataset's format (GDAL's driver names).
    pub fn label(self) -> &'static str {
        match self {
            Self::Wfs => "WFS",
            Self::OgcApiFeatures => "OAPIF",
        }
    }
}

fn parse_url(url: &str) -> Result<Url, AppError> {
    Url::parse(url).map_err(|e| AppError::bad_request(format!("{url:?} is not a URL: {e}")))
}

/// The service's base URL as stored: an OGC API landing page without a trailing
/// `/collections/<layer>[/items]`, a WFS endpoint without the request's own parameters.
pub fn base_url(service: Service, url: &str, layer: &str) -> Result<String, AppError> {
    let mut parsed = parse_url(url)?;
    match service {
        Service::OgcApiFeatures => {
            let mut path = parsed.path().trim_end_matches('/').to_owned();
            for suffix in ["/items", &format!("/{layer}"), "/collections"] {
                if let Some(stripped) = path.strip_suffix(suffix) {
                    path = stripped.to_owned();
                }
            }
            parsed.set_path(&path);
            parsed.set_query(None);
        }
        Service::Wfs => {
            const OWN: [&str; 5] = ["service", "version", "request", "typename", "typenames"];
            let kept: Vec<(String, String)> = parsed
                .query_pairs()
                .filter(|(k, _)| !OWN.contains(&k.to_ascii_lowercase().as_str()))
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            parsed.set_query(None);
            if !kept.is_empty() {
                parsed.query_pairs_mut().extend_pairs(kept);
            }
        }
    }
    Ok(parsed.to_string())
}

fn collection_url(base: &str, layer: &str) -> Result<Url, AppError> {
    let mut url = parse_url(base)?;
    url.path_segments_mut()
        .map_err(|()| AppError::bad_request(format!("{base} cannot have a path")))?
        .pop_if_empty()
        .extend(["collections", layer]);
    Ok(url)
}

fn wfs_url(base: &str, request: &str, layer: &str) -> Result<Url, AppError> {
    let mut url = parse_url(base)?;
    url.query_pairs_mut()
        .append_pair("service", "WFS")
        .append_pair("version", "2.0.0")
        .append_pair("request", request)
        .append_pair("typeNames", layer);
    Ok(url)
}

/// The text of an OGC exception report, when `bytes` is one.
fn exception_text(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(8192)]);
    if !text.contains("ExceptionReport") {
        return None;
    }
    let message = text
        .split_once("ExceptionText>")
        .and_then(|(_, rest)| rest.split_once('<'))
        .map_or("an exception report", |(message, _)| message.trim());
    Some(message.to_owned())
}

/// Checks that the service describes `layer` (nothing but its description is fetched); answers
/// the layer's CRS when the service fixes it.
pub async fn describe(
    service: Service,
    base: &str,
    layer: &str,
    policy: &UrlPolicy,
) -> Result<Option<String>, AppError> {
    let not_offered = |reason: String| {
        AppError::unprocessable(format!(
            "the {} service at {base} does not offer layer {layer:?}: {reason}",
            service.label()
        ))
    };
    // A refused URL stays a 400; a service that answers badly is a 422 naming the layer.
    let unavailable = |error: AppError| {
        if error.kind == ErrorKind::Invalid {
            not_offered(error.message)
        } else {
            error
        }
    };
    match service {
        Service::OgcApiFeatures => {
            let url = collection_url(base, layer)?;
            let accept = Some("application/json");
            let (_, response) =
                fetch::get(url.as_str(), accept, policy, fetch::DESCRIPTION_TIMEOUT)
                    .await
                    .map_err(unavailable)?;
            let bytes = fetch::body(response, DESCRIPTION_LIMIT).await?;
            let description: Value = serde_json::from_slice(&bytes)
                .map_err(|e| not_offered(format!("{url} is not JSON ({e})")))?;
            if !description.is_object() {
                return Err(not_offered(format!("{url} is not a collection")));
            }
            // Items come in CRS84 unless another CRS is asked for, which geomill never does.
            Ok(Some("EPSG:4326".to_owned()))
        }
        Service::Wfs => {
            let url = wfs_url(base, "DescribeFeatureType", layer)?;
            let (_, response) = fetch::get(url.as_str(), None, policy, fetch::DESCRIPTION_TIMEOUT)
                .await
                .map_err(unavailable)?;
            let bytes = fetch::body(response, DESCRIPTION_LIMIT).await?;
            if let Some(reason) = exception_text(&bytes) {
                return Err(not_offered(reason));
            }
            Ok(None)
        }
    }
}

/// Every page of an OGC API collection's items, written as one GeoJSON FeatureCollection.
async fn fetch_collection(
    base: &str,
    layer: &str,
    path: &Path,
    limit: u64,
    policy: &UrlPolicy,
) -> Result<(), AppError> {
    use tokio::io::AsyncWriteExt;
    let mut items = collection_url(base, layer)?;
    items
        .path_segments_mut()
        .map_err(|()| AppError::bad_request(format!("{base} cannot have a path")))?
        .push("items");
    items
        .query_pairs_mut()
        .append_pair("limit", &PAGE_SIZE.to_string());
    let mut next = Some(Ok(items));
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| AppError::internal(&e))?;
    file.write_all(br#"{"type":"FeatureCollection","features":["#)
        .await
        .map_err(|e| AppError::internal(&e))?;
    let (mut written, mut first, mut seen) = (0_u64, true, Vec::<Url>::new());
    while let Some(url) = next.take() {
        let url = url.map_err(|e| AppError::unprocessable(format!("a next link is bad: {e}")))?;
        if seen.contains(&url) {
            break;
        }
        if seen.len() >= MAX_PAGES {
            return Err(AppError::unprocessable(format!(
                "{base} has more than {MAX_PAGES} pages of {layer:?}; nothing was loaded"
            )));
        }
        let accept = Some("application/geo+json");
        let (final_url, response) =
            fetch::get(url.as_str(), accept, policy, fetch::DATA_TIMEOUT).await?;
        let bytes = fetch::body(response, limit.saturating_sub(written)).await?;
        written += bytes.len() as u64;
        let page: Value = serde_json::from_slice(&bytes).map_err(|e| {
            AppError::unprocessable(format!("{url} is not a GeoJSON FeatureCollection: {e}"))
        })?;
        let features = page["features"].as_array().ok_or_else(|| {
            AppError::unprocessable(format!("{url} is not a GeoJSON FeatureCollection"))
        })?;
        for feature in features {
            if !first {
                file.write_all(b",")
                    .await
                    .map_err(|e| AppError::internal(&e))?;
            }
            first = false;
            let text = serde_json::to_vec(feature).map_err(|e| AppError::internal(&e))?;
            file.write_all(&text)
                .await
                .map_err(|e| AppError::internal(&e))?;
        }
        next = page["links"].as_array().and_then(|links| {
            links
                .iter()
                .find(|l| l["rel"] == "next")
                .and_then(|l| l["href"].as_str())
                .map(|href| final_url.join(href))
        });
        seen.push(url);
    }
    file.write_all(b"]}")
        .await
        .map_err(|e| AppError::internal(&e))?;
    file.flush().await.map_err(|e| AppError::internal(&e))
}

/// A WFS GetFeature answer (GML) saved whole; a truncated answer is refused, not loaded.
async fn fetch_feature_type(
    base: &str,
    layer: &str,
    path: &Path,
    limit: u64,
    policy: &UrlPolicy,
) -> Result<(), AppError> {
    let url = wfs_url(base, "GetFeature", layer)?;
    let (_, response) = fetch::get(url.as_str(), None, policy, fetch::DATA_TIMEOUT).await?;
    upload::save(response.bytes_stream(), path, limit, 0, "download").await?;
    let head = read_head(path).await?;
    if let Some(reason) = exception_text(&head) {
        return Err(AppError::unprocessable(format!(
            "the WFS at {base} refused GetFeature for {layer:?}: {reason}"
        )));
    }
    let text = String::from_utf8_lossy(&head);
    let attribute = |name: &str| -> Option<u64> {
        let rest = text.split_once(&format!("{name}=\""))?.1;
        rest.split_once('"')?.0.parse().ok()
    };
    if let (Some(matched), Some(returned)) =
        (attribute("numberMatched"), attribute("numberReturned"))
        && returned < matched
    {
        return Err(AppError::unprocessable(format!(
            "the WFS at {base} returned {returned} of {matched} features of {layer:?} (a server limit); nothing was loaded"
        )));
    }
    Ok(())
}

async fn read_head(path: &Path) -> Result<Vec<u8>, AppError> {
    use tokio::io::AsyncReadExt;
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| AppError::internal(&e))?;
    let mut head = Vec::new();
    file.take(8192)
        .read_to_end(&mut head)
        .await
        .map_err(|e| AppError::internal(&e))?;
    Ok(head)
}

/// The file a remote layer's features are fetched into.
fn features_path(folder: &Path, service: Service) -> PathBuf {
    match service {
        Service::Wfs => folder.join("features.gml"),
        Service::OgcApiFeatures => folder.join("features.geojson"),
    }
}

/// `record` with its features loaded: a remote layer not fetched yet is fetched and loaded now
/// (once, however many requests ask at the same time); any other dataset is answered as is.
pub async fn ensure_loaded(
    state: &AppState,
    record: DatasetRecord,
) -> Result<DatasetRecord, AppError> {
    if record.remote.as_ref().is_none_or(|r| r.loaded_at.is_some()) {
        return Ok(record);
    }
    let _one_at_a_time = state.remote_loads().lock().await;
    let engine = state.store();
    let id = record.id.clone();
    let current = crate::blocking::blocking(move || engine.dataset(&id))
        .await?
        .ok_or_else(|| AppError::not_found(format!("no dataset {}", record.id)))?;
    let Some(remote) = current.remote.clone().filter(|r| r.loaded_at.is_none()) else {
        return Ok(current);
    };
    let service = Service::parse(&remote.service_type).ok_or_else(|| {
        AppError::internal(&format!("unknown service type {}", remote.service_type))
    })?;
    let folder = upload::folder(&state.config().uploads_dir(), &current.id);
    tokio::fs::create_dir_all(&folder)
        .await
        .map_err(|e| AppError::internal(&e))?;
    let path = features_path(&folder, service);
    let outcome = load(state, &current.id, service, &remote, &path).await;
    if outcome.is_err() {
        let _ = tokio::fs::remove_file(&path).await;
    }
    outcome
}

async fn load(
    state: &AppState,
    id: &str,
    service: Service,
    remote: &RemoteLayer,
    path: &Path,
) -> Result<DatasetRecord, AppError> {
    let config = state.config();
    let limit = config.max_upload_mb.saturating_mul(1024 * 1024);
    let policy = UrlPolicy::from_config(config);
    let (base, layer) = (&remote.url, &remote.layer_name);
    let fetching = async {
        match service {
            Service::OgcApiFeatures => fetch_collection(base, layer, path, limit, &policy).await,
            Service::Wfs => fetch_feature_type(base, layer, path, limit, &policy).await,
        }
    };
    let fetched = tokio::time::timeout(LOAD_TIMEOUT, fetching)
        .await
        .unwrap_or_else(|_| {
            Err(AppError::unprocessable(format!(
                "fetching {layer:?} from {base} took longer than {} s",
                LOAD_TIMEOUT.as_secs()
            )))
        });
    // The service failing is a bad gateway (and may pass: jobs retry it); a refused URL or an
    // answer past the size limit keeps its own status.
    fetched.map_err(|error| {
        if error.kind == ErrorKind::Invalid {
            AppError::new(ErrorKind::Upstream, "remote_unavailable", error.message)
        } else {
            error
        }
    })?;
    // What the service answered is checked like an upload (a WFS could answer a VRT).
    let shown = format!("the {} answer for {layer:?}", service.label());
    inspect::check_files(vec![(shown, path.to_path_buf())], limit).await?;
    let source = upload::source_for(path);
    let engine = state.store();
    let key = id.to_owned();
    match crate::blocking::blocking(move || engine.load_remote(&key, &source)).await? {
        Ok(record) => {
            crate::triggers::tracking::record_loaded(state, &record).await;
            Ok(record)
        }
        Err(rejected) => Err(AppError::new(
            ErrorKind::Invalid,
            "unreadable_remote_layer",
            rejected.0,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{Service, base_url};

    #[test]
    fn service_names_are_read_loosely() {
        assert_eq!(Service::parse("wfs"), Some(Service::Wfs));
        assert_eq!(
            Service::parse("OGC API - Features"),
            Some(Service::OgcApiFeatures)
        );
        assert_eq!(Service::parse("OAPIF"), Some(Service::OgcApiFeatures));
        assert_eq!(Service::parse("WMS"), None);
    }

    #[test]
    fn base_urls_drop_what_geomill_adds() {
        assert_eq!(
            base_url(
                Service::OgcApiFeatures,
                "https://h/ogc/collections/roads/items?f=json",
                "roads"
            )
            .unwrap(),
            "https://h/ogc"
        );
        assert_eq!(
            base_url(
                Service::Wfs,
                "https://h/wfs?SERVICE=WFS&request=GetCapabilities&map=a.map",
                "roads"
            )
            .unwrap(),
            "https://h/wfs?map=a.map"
        );
    }
}
