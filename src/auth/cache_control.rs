//! Answers that needed credentials never go to shared caches: the guard makes their
//! `Cache-Control` `private` (a proxy or CDN would otherwise hand a tile or a page fetched with
//! a key to the next caller, who has none). Routes open to anonymous callers keep theirs.

use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderMap, HeaderValue};

/// Directives that let a shared cache keep an answer.
const SHARED: &[&str] = &["public", "s-maxage", "proxy-revalidate"];

/// `headers` with `Cache-Control: private` plus what the handler set, less the directives that
/// speak to shared caches.
pub fn make_private(headers: &mut HeaderMap) {
    let given = headers
        .get(CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut directives = vec!["private".to_owned()];
    for directive in given.split(',').map(str::trim) {
        let name = directive
            .split('=')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if !directive.is_empty() && name != "private" && !SHARED.contains(&name.as_str()) {
            directives.push(directive.to_owned());
        }
    }
    if let Ok(value) = HeaderValue::from_str(&directives.join(", ")) {
        headers.insert(CACHE_CONTROL, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private(given: Option<&str>) -> String {
        let mut headers = HeaderMap::new();
        if let Some(given) = given {
            headers.insert(
                CACHE_CONTROL,
                HeaderValue::from_str(given).unwrap_or_else(|_| unreachable!()),
            );
        }
        make_private(&mut headers);
        headers
            .get(CACHE_CONTROL)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn shared_directives_give_way_to_private() {
        assert_eq!(private(Some("public, max-age=300")), "private, max-age=300");
        assert_eq!(private(Some("no-cache")), "private, no-cache");
        assert_eq!(
            private(Some("Public, s-maxage=60, max-age=5")),
            "private, max-age=5"
        );
        assert_eq!(private(Some("private")), "private");
        assert_eq!(private(None), "private");
    }
}
