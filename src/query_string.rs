//! Query strings decoded as `name=value` pairs (repeated names kept).

/// The decoded `name=value` pairs of a raw query string, repeated names kept in order.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://query.invalid/?{query}"))
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}
