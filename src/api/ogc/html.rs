//! The HTML encoding of the OGC API resources (Part 1 "html" conformance class): which encoding
//! a request asks for, and plain pages drawn from the same JSON documents the API answers, so
//! both encodings always say the same thing.

use axum::http::{HeaderMap, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::Value;

use crate::error::AppError;

/// The encodings the OGC endpoints serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Html,
}

/// The encoding a request asks for: `f` (`html`, or one of `json_names`) wins; otherwise HTML
/// when the `Accept` header ranks `text/html` above every JSON type (what a browser sends),
/// and JSON in every other case (no header, `*/*`, a tie).
pub fn negotiate(
    f: Option<&str>,
    headers: &HeaderMap,
    json_names: &[&str],
) -> Result<Encoding, AppError> {
    if let Some(f) = f {
        return match f {
            "html" => Ok(Encoding::Html),
            other if json_names.contains(&other) => Ok(Encoding::Json),
            other => Err(AppError::bad_request(format!(
                "f={other:?}: use html or {}",
                json_names.join(" or ")
            ))),
        };
    }
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let (mut html, mut json) = (0.0_f64, 0.0_f64);
    for item in accept.split(',') {
        let mut parts = item.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let quality = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f64>().ok())
            .unwrap_or(1.0);
        match media.as_str() {
            "text/html" | "application/xhtml+xml" => html = html.max(quality),
            m if m.ends_with("json") || m == "*/*" || m == "application/*" => {
                json = json.max(quality);
            }
            _ => {}
        }
    }
    Ok(if html > 0.0 && html > json {
        Encoding::Html
    } else {
        Encoding::Json
    })
}

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// The same address, asking for HTML.
fn as_html(href: &str) -> String {
    let separator = if href.contains('?') { '&' } else { '?' };
    format!("{href}{separator}f=html")
}

fn anchor(href: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", escape(href), escape(text))
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A whole page around `body`.
fn page(title: &str, body: &str) -> Response {
    let window_title = if title == "geomill" {
        title.to_owned()
    } else {
        format!("{title} — geomill")
    };
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{window_title}</title><style>\
         body{{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}}\
         nav a{{margin-right:1rem}}</style></head><body>\
         <nav><a href=\"/ogc?f=html\">geomill</a><a href=\"/ogc/collections?f=html\">collections</a>\
         <a href=\"/docs\">API documentation</a></nav><h1>{title}</h1>{body}</body></html>\n",
        title = escape(title),
        window_title = escape(&window_title),
    );
    ([(header::VARY, "Accept")], Html(html)).into_response()
}

/// A document's `links` as a list; those with a JSON type are linked as HTML.
fn link_list(links: &Value) -> String {
    let mut out = String::from("<ul>");
    for link in links.as_array().into_iter().flatten() {
        let href = link["href"].as_str().unwrap_or("");
        let kind = link["type"].as_str().unwrap_or("");
        let target = if kind.contains("json") && !kind.contains("openapi") {
            as_html(href)
        } else {
            href.to_owned()
        };
        let title = link["title"].as_str().unwrap_or(href);
        out.push_str(&format!(
            "<li>{} <small>({})</small></li>",
            anchor(&target, title),
            escape(link["rel"].as_str().unwrap_or(""))
        ));
    }
    out.push_str("</ul>");
    out
}

/// The landing page.
pub fn landing(document: &Value) -> Response {
    let body = format!(
        "<p>{}</p>{}",
        escape(document["description"].as_str().unwrap_or("")),
        link_list(&document["links"])
    );
    page(document["title"].as_str().unwrap_or("geomill"), &body)
}

/// The conformance classes.
pub fn conformance(document: &Value) -> Response {
    let mut body = String::from("<ul>");
    for class in document["conformsTo"].as_array().into_iter().flatten() {
        body.push_str(&format!("<li>{}</li>", escape(&text_of(class))));
    }
    body.push_str("</ul>");
    page("Conformance", &body)
}

/// The collections, a row each with links to their features, map and tiles.
pub fn collections(document: &Value) -> Response {
    let mut body =
        String::from("<table><tr><th>collection</th><th>id</th><th>storage CRS</th><th></th></tr>");
    for collection in document["collections"].as_array().into_iter().flatten() {
        let id = text_of(&collection["id"]);
        let path = format!("/ogc/collections/{}", super::wire::urlencode(&id));
        body.push_str(&format!(
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{} {}</td></tr>",
            anchor(&as_html(&path), &text_of(&collection["title"])),
            escape(&id),
            escape(&text_of(&collection["storageCrs"])),
            anchor(&format!("{path}/items?f=html"), "features"),
            anchor(&format!("{path}/map"), "map"),
        ));
    }
    body.push_str("</table>");
    page("Collections", &body)
}

/// One collection: its extent, CRSs and links.
pub fn collection(document: &Value) -> Response {
    let id = text_of(&document["id"]);
    let path = format!("/ogc/collections/{}", super::wire::urlencode(&id));
    let extent = document["extent"]["spatial"]["bbox"][0]
        .as_array()
        .map(|b| b.iter().map(text_of).collect::<Vec<_>>().join(", "))
        .unwrap_or_else(|| "not known yet".to_owned());
    let crs: Vec<String> = document["crs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| escape(&text_of(c)))
        .collect();
    let body = format!(
        "<p><code>{}</code> · {} · {}</p><table>\
         <tr><th>extent (CRS84)</th><td>{}</td></tr>\
         <tr><th>storage CRS</th><td>{}</td></tr>\
         <tr><th>CRSs offered</th><td>{}</td></tr></table>{}",
        escape(&id),
        anchor(&format!("{path}/items?f=html"), "features"),
        anchor(&format!("{path}/map"), "map"),
        escape(&extent),
        escape(&text_of(&document["storageCrs"])),
        crs.join("<br>"),
        link_list(&document["links"]),
    );
    page(&text_of(&document["title"]), &body)
}

/// The properties of `features` as table columns, in first-seen order.
fn columns(features: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for feature in features {
        for name in feature["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// A page of features as a table, with the paging links.
pub fn items(collection_id: &str, document: &Value) -> Response {
    let features = document["features"].as_array().cloned().unwrap_or_default();
    let names = columns(&features);
    let path = format!("/ogc/collections/{}", super::wire::urlencode(collection_id));
    let mut body = format!(
        "<p>{} of {} features · {}</p><p>",
        escape(&text_of(&document["numberReturned"])),
        escape(&text_of(&document["numberMatched"])),
        anchor(&format!("{path}/map"), "map"),
    );
    for link in document["links"].as_array().into_iter().flatten() {
        let rel = link["rel"].as_str().unwrap_or("");
        if rel == "prev" || rel == "next" {
            body.push_str(&anchor(&as_html(link["href"].as_str().unwrap_or("")), rel));
            body.push(' ');
        }
    }
    body.push_str("</p><table><tr><th>id</th><th>geometry</th>");
    for name in &names {
        body.push_str(&format!("<th>{}</th>", escape(name)));
    }
    body.push_str("</tr>");
    for feature in &features {
        let id = text_of(&feature["id"]);
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td>",
            anchor(&format!("{path}/items/{}?f=html", escape(&id)), &id),
            escape(&text_of(&feature["geometry"]["type"])),
        ));
        for name in &names {
            body.push_str(&format!(
                "<td>{}</td>",
                escape(&text_of(&feature["properties"][name]))
            ));
        }
        body.push_str("</tr>");
    }
    body.push_str("</table>");
    page(&format!("Features of {collection_id}"), &body)
}

/// One feature's properties.
pub fn item(collection_id: &str, feature: &Value) -> Response {
    let path = format!("/ogc/collections/{}", super::wire::urlencode(collection_id));
    let mut body = format!(
        "<p>{} · geometry: {}</p><table>",
        anchor(&format!("{path}/items?f=html"), "all features"),
        escape(&text_of(&feature["geometry"]["type"])),
    );
    for (name, value) in feature["properties"].as_object().into_iter().flatten() {
        body.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(name),
            escape(&text_of(value))
        ));
    }
    body.push_str("</table>");
    page(
        &format!("Feature {} of {collection_id}", text_of(&feature["id"])),
        &body,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use axum::http::HeaderValue;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn browsers_get_html_and_everything_else_json() {
        let json = ["json"];
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert_eq!(
            negotiate(None, &accept(browser), &json).unwrap(),
            Encoding::Html
        );
        for other in [
            "",
            "*/*",
            "application/geo+json, application/json",
            "text/html;q=0.5, application/json",
            "application/json, text/html",
        ] {
            assert_eq!(
                negotiate(None, &accept(other), &json).unwrap(),
                Encoding::Json,
                "{other}"
            );
        }
        assert_eq!(
            negotiate(Some("html"), &accept("*/*"), &json).unwrap(),
            Encoding::Html
        );
        assert_eq!(
            negotiate(Some("json"), &accept(browser), &json).unwrap(),
            Encoding::Json
        );
        assert!(negotiate(Some("xml"), &HeaderMap::new(), &json).is_err());
    }

    #[test]
    fn values_cannot_escape_into_markup() {
        assert_eq!(escape("<script>\"'&"), "&lt;script&gt;&quot;&#39;&amp;");
        assert_eq!(as_html("/a?b=1"), "/a?b=1&f=html");
        assert_eq!(as_html("/a"), "/a?f=html");
    }
}
