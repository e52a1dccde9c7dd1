//! In-process API tests of the foundation: /health, the error model, the 501 table, OpenAPI
//! and the /docs page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{call, call_raw, get, test_state};
use geomill::api::not_implemented::NOT_IMPLEMENTED;
use geomill::config::Config;
use geomill::state::AppState;

#[tokio::test]
async fn health_reports_the_embedded_engine_with_spatial_loaded() {
    let (_dir, state) = test_state();
    let (status, body) = call(&state, get("/health")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ok");
    assert_eq!(body["engine"], "embedded");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["components"]["database"], "ok");
    assert_eq!(body["components"]["disk"], "ok");
    assert_eq!(body["components"]["redis"], "unavailable", "not configured");
}

#[tokio::test]
async fn health_degrades_when_the_data_dir_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let state = AppState::open(Config::with_data_dir(&data_dir)).unwrap();
    std::fs::remove_dir_all(&data_dir).unwrap();
    let (status, body) = call(&state, get("/health")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["status"], "degraded");
    assert_eq!(body["components"]["disk"], "unavailable");
}

#[tokio::test]
async fn health_checks_a_configured_redis_for_real() {
    // A port nobody listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::with_data_dir(dir.path());
    config.redis_url = Some(format!("redis://127.0.0.1:{port}"));
    let state = AppState::open(config).unwrap();
    let (status, body) = call(&state, get("/health")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["components"]["redis"], "unavailable");
    assert_eq!(body["components"]["database"], "ok");

    // A fake Redis that answers PING: now it is ok.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buffer = [0_u8; 16];
        let read = socket.read(&mut buffer).await.unwrap();
        assert_eq!(&buffer[..read], b"PING\r\n");
        socket.write_all(b"+PONG\r\n").await.unwrap();
    });
    let mut config = Config::with_data_dir(dir.path().join("second"));
    config.redis_url = Some(format!("redis://127.0.0.1:{port}/0"));
    let state = AppState::open(config).unwrap();
    let (status, body) = call(&state, get("/health")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["components"]["redis"], "ok");
}

#[tokio::test]
async fn unknown_paths_are_json_404() {
    let (_dir, state) = test_state();
    let (status, body) = call(&state, get("/no/such/thing")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "not_found");
    assert_eq!(body["error"]["message"], "no route for GET /no/such/thing");
    assert!(
        body["error"].get("detail").is_some(),
        "detail is always present"
    );
}

#[tokio::test]
async fn wrong_methods_are_json_405() {
    let (_dir, state) = test_state();
    let request = Request::delete("/health").body(Body::empty()).unwrap();
    let (status, body) = call(&state, request).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body["error"]["code"], "method_not_allowed");
}

/// The spec path with every `{param}` filled in, as a client would call it.
fn concrete(path: &str) -> String {
    path.replace("{y}.mvt", "3.mvt")
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "x1"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_route_not_implemented_yet_answers_501_naming_it() {
    let (_dir, state) = test_state();
    for (method, path, _group) in NOT_IMPLEMENTED {
        let uri = concrete(path);
        let request = Request::builder()
            .method(*method)
            .uri(&uri)
            .body(Body::empty())
            .unwrap();
        let (status, body) = call(&state, request).await;
        assert_eq!(
            status,
            StatusCode::NOT_IMPLEMENTED,
            "{method} {uri}: {body}"
        );
        assert_eq!(body["error"]["code"], "not_implemented");
        assert_eq!(body["error"]["detail"]["path"], uri.as_str());
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{method} {uri} "))
        );
    }
}

#[test]
fn the_readme_lists_every_route_not_implemented_yet() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let missing: Vec<String> = NOT_IMPLEMENTED
        .iter()
        .map(|(method, path, _)| format!("`{method} {path}`"))
        .filter(|entry| !readme.contains(entry.as_str()))
        .collect();
    assert!(missing.is_empty(), "README does not list: {missing:?}");
}

#[tokio::test]
async fn openapi_document_describes_health_and_every_501_route() {
    let (_dir, state) = test_state();
    let (status, doc) = call(&state, get("/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    assert_eq!(doc["info"]["title"], "geomill");
    let health = &doc["paths"]["/health"]["get"];
    assert!(health["responses"]["200"].is_object(), "{health}");
    assert!(doc["components"]["schemas"]["Health"].is_object());
    for (method, path, _) in NOT_IMPLEMENTED {
        let operation = &doc["paths"][*path][method.to_lowercase()];
        assert!(
            operation["responses"]["501"].is_object(),
            "{method} {path} missing from OpenAPI"
        );
    }
    // The spec's short forms of the pipeline routes are documented like their long forms.
    for (method, path) in [
        ("post", "/pipelines/validate"),
        ("post", "/pipelines/execute"),
        ("get", "/pipelines/examples"),
    ] {
        let operation = &doc["paths"][path][method];
        assert!(
            operation["responses"]["200"].is_object(),
            "{method} {path}: {operation}"
        );
        let long = &doc["paths"][format!("/api{path}")][method];
        assert_ne!(operation["operationId"], long["operationId"], "{path}");
    }
}

#[tokio::test]
async fn docs_page_loads_only_assets_served_by_geomill() {
    let (_dir, state) = test_state();
    let (status, _) = call_raw(&state, get("/docs")).await;
    assert!(status.is_redirection(), "/docs redirects to /docs/");
    let (status, html) = call_raw(&state, get("/docs/")).await;
    assert_eq!(status, StatusCode::OK);
    let html = String::from_utf8(html).unwrap();
    let references: Vec<&str> = html
        .split(['"', '\''])
        .filter(|part| part.ends_with(".js") || part.ends_with(".css") || part.ends_with(".png"))
        .collect();
    assert!(references.len() >= 4, "{references:?}");
    for reference in references {
        assert!(!reference.contains("//"), "external reference {reference}");
        let path = format!("/docs/{}", reference.trim_start_matches("./"));
        let (status, bytes) = call_raw(&state, get(&path)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(!bytes.is_empty(), "{path}");
    }
    let (_, initializer) = call_raw(&state, get("/docs/swagger-initializer.js")).await;
    let initializer = String::from_utf8(initializer).unwrap();
    assert!(initializer.contains("/openapi.json"), "{initializer}");
    assert!(
        !initializer.contains("http"),
        "no absolute URL in the initializer: {initializer}"
    );
}
