//! Every route of the OpenAPI document, called with no key, a wrong key, a viewer key and an
//! admin key: 401, 403 and success exactly as each operation documents (`x-geomill-role`).
//! The walk reads the document, so a new route is covered as soon as it is documented, and a
//! second test checks that the router has no route the document lacks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use geomill::auth::config::Tier;
use geomill::config::Config;
use geomill::state::AppState;
use serde_json::Value;
use tower::ServiceExt;

const ADMIN: &str = "ops:admin:admin-key-0001";
const VIEWER: &str = "vera:viewer:viewer-key-0001";
const ADMIN_HEADER: &str = "s3cret-admin-header";

fn keyed_state(dir: &std::path::Path) -> AppState {
    let mut config = Config::with_data_dir(dir);
    config.auth.api_keys = Some(format!("{ADMIN},{VIEWER}"));
    config.admin_key = Some(ADMIN_HEADER.into());
    config.auth.tier = Tier::Enterprise;
    AppState::open(config).unwrap()
}

/// A concrete path for a documented template: every parameter gets a value that names nothing.
fn concrete(template: &str) -> String {
    template
        .split('/')
        .map(|segment| match segment {
            "{z}" | "{x}" | "{y}" => "0".to_owned(),
            "{y}.mvt" => "0.mvt".to_owned(),
            "{id}" => "00000000-0000-4000-8000-000000000000".to_owned(),
            s if s.starts_with('{') => "no-such-thing".to_owned(),
            s => s.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[derive(Clone, Copy, Debug)]
enum Credentials {
    None,
    Wrong,
    Viewer,
    Admin,
}

/// The status of one call; the body is not read (some routes stream forever).
async fn status_of(
    state: &AppState,
    method: &Method,
    path: &str,
    credentials: Credentials,
) -> StatusCode {
    let mut request = Request::builder().method(method.clone()).uri(path);
    request = match credentials {
        Credentials::None => request,
        Credentials::Wrong => request.header("x-api-key", "not-a-key-at-all"),
        Credentials::Viewer => request.header("authorization", "Bearer viewer-key-0001"),
        Credentials::Admin => request
            .header("x-api-key", "admin-key-0001")
            .header("x-admin-key", ADMIN_HEADER),
    };
    let body = if matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        request = request.header("content-type", "application/json");
        Body::from("{}")
    } else {
        Body::empty()
    };
    geomill::api::app(state.clone())
        .oneshot(request.body(body).unwrap())
        .await
        .unwrap()
        .status()
}

fn operations(doc: &Value) -> Vec<(Method, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (name, operation) in item.as_object().unwrap() {
            let Ok(method) = name.to_ascii_uppercase().parse::<Method>() else {
                continue;
            };
            if operation.is_object() && name != "parameters" {
                found.push((method, path.clone(), operation.clone()));
            }
        }
    }
    found
}

#[tokio::test]
async fn every_documented_route_answers_each_caller_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let state = keyed_state(dir.path());
    let doc = serde_json::to_value(geomill::api::docs::openapi()).unwrap();
    let operations = operations(&doc);
    assert!(
        operations.len() > 80,
        "only {} operations",
        operations.len()
    );
    let mut problems = Vec::new();
    for (method, template, operation) in &operations {
        let role = operation["x-geomill-role"].as_str().unwrap_or("missing");
        let admin_key = operation["x-geomill-admin-key"] == true;
        let documented: Vec<&String> = operation["responses"].as_object().unwrap().keys().collect();
        let path = concrete(template);
        for credentials in [
            Credentials::None,
            Credentials::Wrong,
            Credentials::Viewer,
            Credentials::Admin,
        ] {
            let status = status_of(&state, method, &path, credentials).await;
            let expected = match (role, credentials) {
                ("none", _) => None,
                (_, Credentials::None) => Some(StatusCode::UNAUTHORIZED),
                (_, Credentials::Wrong) => Some(StatusCode::FORBIDDEN),
                // The viewer sends no X-Admin-Key: routes that take one answer 401.
                ("viewer", Credentials::Viewer) if admin_key => Some(StatusCode::UNAUTHORIZED),
                ("viewer", Credentials::Viewer) => None,
                (_, Credentials::Viewer) => Some(StatusCode::FORBIDDEN),
                (_, Credentials::Admin) => None,
            };
            let allowed_through =
                status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN;
            let right = match expected {
                Some(expected) => status == expected,
                None => allowed_through,
            };
            if !right {
                problems.push(format!(
                    "{method} {path} (role {role}) with {credentials:?}: {status}, expected {}",
                    expected.map_or("not 401/403".to_owned(), |e| e.to_string())
                ));
            }
            if !documented.iter().any(|code| *code == status.as_str()) {
                problems.push(format!(
                    "{method} {path} with {credentials:?}: {status} is not documented ({documented:?})"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn reads_without_parameters_succeed_for_a_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let state = keyed_state(dir.path());
    let doc = serde_json::to_value(geomill::api::docs::openapi()).unwrap();
    let mut checked = 0;
    for (method, template, operation) in operations(&doc) {
        if method != Method::GET
            || template.contains('{')
            || operation["x-geomill-role"] != "viewer"
            || operation["responses"].get("501").is_some()
            || template.ends_with("eval-stream")
            || template == "/ws/events"
        {
            continue;
        }
        let status = status_of(&state, &method, &template, Credentials::Viewer).await;
        // Projects answer 503 without a PostgreSQL DSN: that is this server's state, not auth.
        assert!(
            status.is_success()
                || (template.starts_with("/projects") && status == StatusCode::SERVICE_UNAVAILABLE),
            "GET {template}: {status}"
        );
        checked += 1;
    }
    assert!(checked > 10, "{checked}");
}

#[tokio::test]
async fn routes_nobody_documented_are_closed_too() {
    let dir = tempfile::tempdir().unwrap();
    let state = keyed_state(dir.path());
    // Aliases and unknown paths go through the same guard.
    for path in ["/pipelines/examples", "/no/such/route"] {
        let status = status_of(&state, &Method::GET, path, Credentials::None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
    }
    let status = status_of(
        &state,
        &Method::POST,
        "/pipelines/execute",
        Credentials::Viewer,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
