//! Fetching a spatial file from a URL without opening the server to request forgery: only
//! http(s), every host resolved first and refused when any address is private, loopback,
//! link-local (cloud metadata) or otherwise not public, the connection pinned to the checked
//! address (no DNS rebinding), redirects followed by hand and checked hop by hop.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::error::ApiError;

const MAX_REDIRECTS: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(60);

/// Whether an address is reachable on the public internet (the only kind fetched by default).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

fn refused(message: String) -> ApiError {
    ApiError::bad_request(message)
}

/// The URL parsed and its host resolved to an address allowed for fetching.
async fn checked(url: &str, allow_private: bool) -> Result<(reqwest::Url, SocketAddr), ApiError> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| refused(format!("{url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(refused(format!(
            "only http and https URLs are fetched, not {}",
            parsed.scheme()
        )));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| refused(format!("{url} has no host")))?
        .to_owned();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let host_for_lookup = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host_for_lookup.as_str(), port))
        .await
        .map_err(|e| refused(format!("cannot resolve {host}: {e}")))?
        .collect();
    let first = *addresses
        .first()
        .ok_or_else(|| refused(format!("{host} has no address")))?;
    if !allow_private && let Some(private) = addresses.iter().find(|a| !is_public(a.ip())) {
        return Err(refused(format!(
            "{host} resolves to {}, a private, loopback or link-local address: not fetched (GEOMILL_ALLOW_PRIVATE_URLS)",
            private.ip()
        )));
    }
    Ok((parsed, first))
}

/// GETs `url`, following redirects by hand (each hop checked like the first); answers the
/// final URL and its successful response. `accept` sets the Accept header.
pub async fn get(
    url: &str,
    accept: Option<&str>,
    allow_private: bool,
) -> Result<(reqwest::Url, reqwest::Response), ApiError> {
    let mut current = url.to_owned();
    for _ in 0..=MAX_REDIRECTS {
        let (parsed, address) = checked(&current, allow_private).await?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT)
            .resolve(&host, address)
            .build()
            .map_err(|e| ApiError::internal(&e))?;
        let mut request = client.get(parsed.clone());
        if let Some(accept) = accept {
            request = request.header(reqwest::header::ACCEPT, accept);
        }
        let response = request
            .send()
            .await
            .map_err(|e| ApiError::unprocessable(format!("cannot fetch {current}: {e}")))?;
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| {
                    ApiError::unprocessable(format!("{current} redirects without a location"))
                })?;
            current = parsed
                .join(location)
                .map_err(|e| ApiError::unprocessable(e.to_string()))?
                .to_string();
            continue;
        }
        if !response.status().is_success() {
            return Err(ApiError::unprocessable(format!(
                "{current} answered {}",
                response.status()
            )));
        }
        return Ok((parsed, response));
    }
    Err(ApiError::unprocessable(format!(
        "{url} redirects more than {MAX_REDIRECTS} times"
    )))
}

/// The whole body of `response`, refused past `limit` bytes.
pub async fn body(response: reqwest::Response, limit: u64) -> Result<Vec<u8>, ApiError> {
    use futures_util::StreamExt;
    let source = response.url().to_string();
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::unprocessable(format!("cannot read {source}: {e}")))?;
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > limit {
            return Err(ApiError::new(
                axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!(
                    "{source} answers more than the limit of {} MiB (GEOMILL_MAX_UPLOAD_MB)",
                    limit / (1024 * 1024)
                ),
            ));
        }
    }
    Ok(bytes)
}

/// Downloads `url` into the path `path_for` gives for the final URL's file name, at most
/// `limit` bytes; answers that path.
pub async fn download(
    url: &str,
    path_for: impl Fn(&str) -> std::path::PathBuf,
    limit: u64,
    allow_private: bool,
) -> Result<std::path::PathBuf, ApiError> {
    let (final_url, response) = get(url, None, allow_private).await?;
    let name = final_url
        .path_segments()
        .and_then(|mut segments| segments.next_back().map(str::to_owned))
        .and_then(|segment| super::upload::base_name(&segment))
        .unwrap_or_else(|| "download".to_owned());
    let path = path_for(&name);
    super::upload::save(response.bytes_stream(), &path, limit, 0, "download").await?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::is_public;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for address in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(address.parse().unwrap()), "{address}");
        }
        for address in ["8.8.8.8", "151.101.1.69", "2a00:1450:4001:80b::200e"] {
            assert!(is_public(address.parse().unwrap()), "{address}");
        }
    }
}
