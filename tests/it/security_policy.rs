//! Roles on the real server, as an attacker meets them: every route × method of
//! `/openapi.json` called as anonymous, viewer, editor and admin against a table of
//! expectations kept here (not read from the document it checks), and a viewer's write that
//! claimed to be a read. Secrets, caching and binding are `security_secrets`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::Server;
use crate::common::roles::{ADMIN_KEY, Caller, keyed_server, request};

/// Routes anyone may call (method, path template); `GET /docs/...` too.
const PUBLIC: &[(&str, &str)] = &[
    ("GET", "/health"),
    ("GET", "/openapi.json"),
    ("POST", "/auth/login"),
    ("POST", "/auth/logout"),
    ("GET", "/auth/session"),
    ("GET", "/auth/providers"),
    ("GET", "/auth/oidc/login"),
    ("GET", "/auth/oidc/callback"),
];

/// The POSTs a viewer may call, reviewed one by one: each answers from what the request holds
/// or what is stored, and stores nothing.
const READ_POSTS: &[(&str, &str)] = &[
    ("/api/pipelines/validate", "checks a pipeline document"),
    ("/pipelines/validate", "the same, older path"),
    (
        "/api/pipelines/preview",
        "plans and prints SQL, runs nothing",
    ),
    ("/rules/validate", "checks a rule document"),
    ("/rules/to-node", "converts a rule document to a node"),
    ("/rules/{id}/validate", "checks a stored rule again"),
    (
        "/capabilities/{name}/sql-preview",
        "plans one step, runs nothing (GET does the same)",
    ),
    ("/api/portal/sql/execute", "one read-only query (guarded)"),
    (
        "/api/portal/sql/export",
        "one read-only query as a file, scratch removed",
    ),
    ("/api/portal/datasets/export", "a stored layer as a file"),
    ("/datasets/export-gpkg", "a stored layer as a GeoPackage"),
    (
        "/datasets/{id}/layers/{layer}/breaks",
        "class breaks of a layer",
    ),
    ("/sessions/{id}/query", "one read-only query over a session"),
    ("/triggers/validate", "checks a trigger document"),
    ("/triggers/test", "dry run: nothing published or sent"),
    (
        "/triggers/evaluate",
        "predicates over given rows or a layer",
    ),
    (
        "/examples/{id}/triggers/dryrun",
        "dry run over an example file",
    ),
];

/// The least caller a route lets through, by this file's table.
fn least_caller(method: &str, template: &str) -> Caller {
    let read_method = if method == "HEAD" { "GET" } else { method };
    if PUBLIC.contains(&(read_method, template))
        || (read_method == "GET" && (template == "/docs" || template.starts_with("/docs/")))
    {
        return Caller::Anonymous;
    }
    if template == "/admin" || template.starts_with("/admin/") {
        return Caller::Admin;
    }
    if read_method == "GET" || (method == "POST" && READ_POSTS.iter().any(|(p, _)| *p == template))
    {
        return Caller::Viewer;
    }
    Caller::Editor
}

/// The `x-geomill-role` the document should show for that caller.
fn documented_role(least: Caller) -> &'static str {
    match least {
        Caller::Anonymous => "none",
        Caller::Viewer => "viewer",
        Caller::Editor => "editor",
        Caller::Admin => "admin",
    }
}

/// A concrete path for a template: every parameter filled with a value that names nothing.
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

/// What the guard made of a request.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// 401 `unauthenticated`.
    Unauthenticated,
    /// 403 `forbidden` or `tier_required`.
    Refused,
    /// Anything else: the handler ran.
    Through(StatusCode),
}

/// Sends one request and classifies the answer; the body is read only for 401 and 403 (some
/// routes stream for ever once let through).
async fn outcome(builder: reqwest::RequestBuilder, method: &Method) -> Outcome {
    let builder = if matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        builder
            .header("content-type", "application/json")
            .body("{}")
    } else {
        builder
    };
    let response = tokio::time::timeout(Duration::from_secs(120), builder.send())
        .await
        .expect("an answer within 120 s")
        .expect("request");
    let status = response.status();
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return Outcome::Through(status);
    }
    let body: Value = response.json().await.unwrap_or(Value::Null);
    match (status, body["error"]["code"].as_str().unwrap_or_default()) {
        (StatusCode::UNAUTHORIZED, "unauthenticated") => Outcome::Unauthenticated,
        (StatusCode::FORBIDDEN, "forbidden" | "tier_required") => Outcome::Refused,
        _ => Outcome::Through(status),
    }
}

/// Every (method, template, operation) of the document.
fn operations(doc: &Value) -> Vec<(Method, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (name, operation) in item.as_object().expect("path item") {
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

/// How many items each listing holds (as the admin sees them).
async fn catalog_sizes(client: &reqwest::Client, server: &Server) -> Vec<(String, Value)> {
    let mut sizes = Vec::new();
    for (path, field) in [
        ("/rules", "total"),
        ("/triggers", "total"),
        ("/datasets", "total"),
        ("/jobs", "total"),
        ("/schedules", "total"),
        ("/sessions", "total"),
    ] {
        let answer: Value = request(client, server, Method::GET, path, Caller::Admin)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap_or(Value::Null);
        let size = match &answer[field] {
            Value::Null => json!(
                answer
                    .as_object()
                    .map(|o| o.values().find_map(|v| v.as_array().map(Vec::len)))
            ),
            total => total.clone(),
        };
        sizes.push((path.to_owned(), size));
    }
    sizes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_each_role_by_the_table() {
    let server = keyed_server(&[]);
    let client = reqwest::Client::new();
    let doc: Value = client
        .get(server.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let operations = operations(&doc);
    assert!(
        operations.len() > 80,
        "only {} operations",
        operations.len()
    );
    for (path, _) in READ_POSTS {
        assert!(
            operations
                .iter()
                .any(|(m, t, _)| *m == Method::POST && t == path),
            "POST {path} of the reviewed reads is not in the document"
        );
    }
    let before = catalog_sizes(&client, &server).await;
    let mut problems = Vec::new();
    let mut calls = 0;
    for caller in [
        Caller::Anonymous,
        Caller::Viewer,
        Caller::Editor,
        Caller::Admin,
    ] {
        if caller == Caller::Editor {
            // Anonymous callers and viewers have had their go at every route: nothing changed.
            assert_eq!(catalog_sizes(&client, &server).await, before);
        }
        for (method, template, operation) in &operations {
            let least = least_caller(method.as_str(), template);
            if caller == Caller::Anonymous {
                let role = operation["x-geomill-role"].as_str().unwrap_or("missing");
                if role != documented_role(least) {
                    problems.push(format!(
                        "{method} {template}: documented {role}, expected {}",
                        documented_role(least)
                    ));
                }
            }
            let path = concrete(template);
            let got = outcome(
                request(&client, &server, method.clone(), &path, caller),
                method,
            )
            .await;
            calls += 1;
            let right = match (least, caller) {
                (Caller::Anonymous, _) => matches!(got, Outcome::Through(_)),
                (_, Caller::Anonymous) => got == Outcome::Unauthenticated,
                (least, caller) if caller < least => got == Outcome::Refused,
                _ => matches!(got, Outcome::Through(_)),
            };
            if !right {
                problems.push(format!(
                    "{method} {path} as {caller:?} (needs {least:?}): {got:?}"
                ));
            }
            // Routes behind X-Admin-Key refuse an admin who does not send it.
            if caller == Caller::Admin && operation["x-geomill-admin-key"] == true {
                let bare = client
                    .request(method.clone(), server.url(&path))
                    .header("x-api-key", ADMIN_KEY);
                let got = outcome(bare, method).await;
                if got != Outcome::Unauthenticated {
                    problems.push(format!(
                        "{method} {path} as admin without X-Admin-Key: {got:?}"
                    ));
                }
            }
        }
    }
    assert!(calls >= operations.len() * 4);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `/rules` total as the admin sees it.
async fn rule_count(client: &reqwest::Client, server: &Server) -> i64 {
    let answer: Value = request(client, server, Method::GET, "/rules", Caller::Admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["total"].as_i64().expect("total")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_cannot_store_a_rule_through_from_node() {
    let server = keyed_server(&[]);
    let client = reqwest::Client::new();
    let rule = json!({"name": "halo", "capability": "buffer",
                      "config": {"distance": 500, "unit": "meters"}});
    let response = request(
        &client,
        &server,
        Method::POST,
        "/rules/to-node",
        Caller::Viewer,
    )
    .json(&rule)
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let node: Value = response.json().await.unwrap();

    let before = rule_count(&client, &server).await;
    let response = request(
        &client,
        &server,
        Method::POST,
        "/rules/from-node",
        Caller::Viewer,
    )
    .json(&node)
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let refusal: Value = response.json().await.unwrap();
    assert_eq!(refusal["error"]["code"], "forbidden", "{refusal}");
    assert_eq!(rule_count(&client, &server).await, before, "nothing stored");

    // The editor's node is stored, as before.
    let response = request(
        &client,
        &server,
        Method::POST,
        "/rules/from-node",
        Caller::Editor,
    )
    .json(&node)
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(rule_count(&client, &server).await, before + 1);
}
