//! Fetching from a URL without opening the server to request forgery: only http(s), every host
//! resolved once and refused when any address is private, loopback, link-local (cloud metadata)
//! or otherwise not public — unless the operator allows private addresses or names the host
//! (`GEOMILL_ALLOWED_URL_HOSTS`) —, the connection pinned to the checked address (no DNS
//! rebinding, no proxy), redirects followed by hand and checked hop by hop, and every request
//! and body under a time and size limit.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use crate::config::Config;
use crate::error::{AppError, ErrorKind};

const MAX_REDIRECTS: usize = 5;
/// Longest wait for a host's addresses.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest request, body included: a service description.
pub const DESCRIPTION_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest request, body included: a file or a page of features.
pub const DATA_TIMEOUT: Duration = Duration::from_secs(300);

/// Which URLs the server fetches: those of public addresses, and those the operator allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// `GEOMILL_ALLOW_PRIVATE_URLS`: any address.
    pub allow_private: bool,
    /// `GEOMILL_ALLOWED_URL_HOSTS`: lower-case `host` or `host:port` entries fetched whatever
    /// their addresses.
    pub allowed_hosts: Vec<String>,
}

impl UrlPolicy {
    pub fn from_config(config: &Config) -> Self {
        Self {
            allow_private: config.allow_private_urls,
            allowed_hosts: config
                .allowed_url_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
        }
    }

    /// Whether `host` (as a URL spells it, IPv6 in brackets) on `port` is named by the operator.
    fn names(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        let with_port = format!("{host}:{port}");
        self.allowed_hosts
            .iter()
            .any(|entry| *entry == host || *entry == with_port)
    }
}

fn public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    !(v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

/// Whether an address is reachable on the public internet (the only kind fetched by default).
/// IPv6 addresses that carry an IPv4 one (mapped, NAT64, 6to4) are judged by it.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return public_v4(v4);
            }
            let s = v6.segments();
            let embedded = |high: u16, low: u16| {
                let [a, b] = high.to_be_bytes();
                let [c, d] = low.to_be_bytes();
                Ipv4Addr::new(a, b, c, d)
            };
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return public_v4(embedded(s[6], s[7]));
            }
            if s[0] == 0x2002 {
                return public_v4(embedded(s[1], s[2]));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || s[..6] == [0; 6] // IPv4-compatible (deprecated)
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x2001 && s[1] == 0)) // Teredo
        }
    }
}

/// A URL the server will not fetch: 400 `url_not_allowed`.
fn refused(message: String) -> AppError {
    AppError::new(ErrorKind::BadRequest, "url_not_allowed", message)
}

/// The URL parsed and its host resolved (once) to an address `policy` allows.
async fn checked(url: &str, policy: &UrlPolicy) -> Result<(reqwest::Url, SocketAddr), AppError> {
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
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let lookup = tokio::net::lookup_host((bare.as_str(), port));
    let addresses: Vec<SocketAddr> = tokio::time::timeout(RESOLVE_TIMEOUT, lookup)
        .await
        .map_err(|_| refused(format!("resolving {host} took longer than 10 s")))?
        .map_err(|e| refused(format!("cannot resolve {host}: {e}")))?
        .collect();
    let first = *addresses
        .first()
        .ok_or_else(|| refused(format!("{host} has no address")))?;
    if !policy.allow_private
        && !policy.names(&host, port)
        && let Some(private) = addresses.iter().find(|a| !is_public(a.ip()))
    {
        return Err(refused(format!(
            "{host} resolves to {}, a private, loopback or link-local address: not fetched (GEOMILL_ALLOW_PRIVATE_URLS, GEOMILL_ALLOWED_URL_HOSTS)",
            private.ip()
        )));
    }
    Ok((parsed, first))
}

/// Sends the request `build` makes for each hop, starting at `url` and following redirects by
/// hand (each hop checked like the first, a refused hop named); answers the final URL and its
/// successful response. The request, body included, is limited to `timeout`.
pub async fn send(
    url: &str,
    policy: &UrlPolicy,
    timeout: Duration,
    build: impl Fn(&reqwest::Client, reqwest::Url) -> reqwest::RequestBuilder,
) -> Result<(reqwest::Url, reqwest::Response), AppError> {
    let mut current = url.to_owned();
    let mut previous: Option<String> = None;
    for _ in 0..=MAX_REDIRECTS {
        let (parsed, address) =
            checked(&current, policy)
                .await
                .map_err(|error| match &previous {
                    Some(from) => refused(format!(
                        "{from} redirects to {current}, which is refused: {}",
                        error.message
                    )),
                    None => error,
                })?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(timeout)
            .resolve(&host, address)
            .build()
            .map_err(|e| AppError::internal(&e))?;
        let response = build(&client, parsed.clone())
            .send()
            .await
            .map_err(|e| AppError::unprocessable(format!("cannot fetch {current}: {e}")))?;
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| {
                    AppError::unprocessable(format!("{current} redirects without a location"))
                })?;
            let next = parsed
                .join(location)
                .map_err(|e| AppError::unprocessable(e.to_string()))?
                .to_string();
            previous = Some(std::mem::replace(&mut current, next));
            continue;
        }
        if !response.status().is_success() {
            return Err(AppError::unprocessable(format!(
                "{current} answered {}",
                response.status()
            )));
        }
        return Ok((parsed, response));
    }
    Err(AppError::unprocessable(format!(
        "{url} redirects more than {MAX_REDIRECTS} times"
    )))
}

/// GETs `url` through [`send`]; `accept` sets the Accept header.
pub async fn get(
    url: &str,
    accept: Option<&str>,
    policy: &UrlPolicy,
    timeout: Duration,
) -> Result<(reqwest::Url, reqwest::Response), AppError> {
    send(url, policy, timeout, |client, url| {
        let request = client.get(url);
        match accept {
            Some(accept) => request.header(reqwest::header::ACCEPT, accept),
            None => request,
        }
    })
    .await
}

/// The whole body of `response`, refused past `limit` bytes.
pub async fn body(response: reqwest::Response, limit: u64) -> Result<Vec<u8>, AppError> {
    use futures_util::StreamExt;
    let source = response.url().to_string();
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| AppError::unprocessable(format!("cannot read {source}: {e}")))?;
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > limit {
            return Err(AppError::new(
                ErrorKind::TooLarge,
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
    policy: &UrlPolicy,
) -> Result<std::path::PathBuf, AppError> {
    let (final_url, response) = get(url, None, policy, DATA_TIMEOUT).await?;
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
    use super::{UrlPolicy, is_public};

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
            "192.0.0.8",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "fec0::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2001:db8::1",
        ] {
            assert!(!is_public(address.parse().unwrap()), "{address}");
        }
        for address in [
            "8.8.8.8",
            "151.101.1.69",
            "2a00:1450:4001:80b::200e",
            "64:ff9b::808:808",
        ] {
            assert!(is_public(address.parse().unwrap()), "{address}");
        }
    }

    #[test]
    fn allowed_hosts_match_with_or_without_their_port() {
        let policy = UrlPolicy {
            allow_private: false,
            allowed_hosts: vec![
                "wfs.internal".into(),
                "10.0.0.5:8080".into(),
                "[::1]:81".into(),
            ],
        };
        assert!(policy.names("WFS.internal", 443));
        assert!(policy.names("10.0.0.5", 8080));
        assert!(!policy.names("10.0.0.5", 80));
        assert!(policy.names("[::1]", 81));
        assert!(!policy.names("wfs.internal.evil.example", 80));
    }
}
