//! The request-forgery guard of every URL the server fetches (`/datasets/import-url`,
//! `/datasets/ogc`, a remote layer's first load): loopback, private, link-local and metadata
//! addresses, names resolving to loopback, and redirects to any of them are refused hop by
//! hop — also when the first hop is a host the operator allows — before the target is asked
//! anything; fetched bodies stay under the size limits, and what a service answers is checked
//! like an upload (a WFS answering a VRT is refused).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use common::{call, post_json};
use geomill::config::Config;
use geomill::state::AppState;
use serde_json::{Value, json};

const POINTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#;

/// Serves `app` on 127.0.0.1; answers the port.
async fn serve(app: Router) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// The server an attack wants to reach (standing for an internal service): a GeoJSON file, a
/// large one, and an OGC API collection. Answers its port and how many requests reached it.
async fn target() -> (u16, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = Router::new()
        .route("/x.geojson", get(|| async { POINTS }))
        .route("/big.geojson", get(|| async { vec![b' '; 2 << 20] }))
        .route(
            "/ogc/collections/pts",
            get(|| async { axum::Json(json!({"id": "pts"})) }),
        )
        .route("/ogc/collections/pts/items", get(|| async { POINTS }))
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                counted.fetch_add(1, Ordering::SeqCst);
                next.run(request)
            },
        ));
    (serve(app).await, hits)
}

/// A server whose paths redirect to the target (`/to/...` by address, `/to-localhost/...` by
/// name), to the metadata service and to a file; it also serves an OGC API collection of its
/// own whose items redirect to the target, and one whose description is too large.
async fn redirector(target: u16) -> u16 {
    let hop = move |host: &'static str, prefix: &'static str| {
        move |uri: Uri| async move {
            let rest = uri.path_and_query().map_or("", |p| p.as_str());
            let rest = rest.strip_prefix(prefix).unwrap_or(rest);
            Redirect::to(&format!("http://{host}:{target}{rest}")).into_response()
        }
    };
    let app = Router::new()
        .route("/to/{*rest}", get(hop("127.0.0.1", "/to")))
        .route(
            "/to-localhost/{*rest}",
            get(hop("localhost", "/to-localhost")),
        )
        .route(
            "/to-metadata",
            get(|| async { Redirect::to("http://169.254.169.254/latest/meta-data/") }),
        )
        .route(
            "/to-file",
            get(|| async { Redirect::to("file:///etc/passwd") }),
        )
        .route(
            "/ogc/collections/pts",
            get(|| async { axum::Json(json!({"id": "pts"})) }),
        )
        .route("/ogc/collections/pts/items", get(hop("127.0.0.1", "")))
        .route(
            "/huge/collections/pts",
            get(|| async { format!("{{\"id\": \"pts\", \"pad\": \"{}\"}}", "x".repeat(5 << 20)) }),
        );
    serve(app).await
}

fn app_state(dir: &std::path::Path, edit: impl FnOnce(&mut Config)) -> AppState {
    let mut config = Config::with_data_dir(dir);
    edit(&mut config);
    AppState::open(config).unwrap()
}

async fn import(state: &AppState, url: &str) -> (StatusCode, Value) {
    call(
        state,
        post_json("/datasets/import-url", &json!({ "url": url })),
    )
    .await
}

async fn register(state: &AppState, url: &str) -> (StatusCode, Value) {
    let body = json!({"url": url, "service_type": "OAPIF", "layer_name": "pts"});
    call(state, post_json("/datasets/ogc", &body)).await
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

/// Nothing stored: no dataset, no upload folder.
async fn assert_nothing_stored(state: &AppState, dir: &std::path::Path) {
    let (_, page) = call(state, common::get("/datasets")).await;
    assert_eq!(page["total"], 0, "{page}");
    let folders = std::fs::read_dir(dir.join("uploads")).map_or(0, Iterator::count);
    assert_eq!(folders, 0, "a refused fetch left a folder");
}

#[tokio::test]
async fn private_loopback_and_metadata_addresses_are_refused_before_any_request() {
    let (port, hits) = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), |_| {});
    for url in [
        format!("http://127.0.0.1:{port}/x.geojson"),
        format!("http://[::1]:{port}/x.geojson"),
        format!("http://localhost:{port}/x.geojson"),
        format!("http://LOCALHOST:{port}/x.geojson"),
        format!("http://0.0.0.0:{port}/x.geojson"),
        format!("http://2130706433:{port}/x.geojson"),
        format!("http://0x7f.1:{port}/x.geojson"),
        format!("http://[::ffff:127.0.0.1]:{port}/x.geojson"),
        "http://10.0.0.1/x.geojson".to_owned(),
        "http://10.255.255.254:8080/x.geojson".to_owned(),
        "http://172.16.0.1/x.geojson".to_owned(),
        "http://192.168.1.1/x.geojson".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://100.64.0.1/x.geojson".to_owned(),
        "http://[fd00::1]/x.geojson".to_owned(),
        "http://[fe80::1]/x.geojson".to_owned(),
    ] {
        let (status, body) = import(&state, &url).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert_eq!(body["error"]["code"], "url_not_allowed", "{url}: {body}");
        assert!(
            message(&body).contains("private, loopback or link-local"),
            "{url}: {body}"
        );
    }
    for url in [
        "file:///etc/passwd".to_owned(),
        format!("gopher://127.0.0.1:{port}/x"),
        format!("ftp://127.0.0.1:{port}/x"),
    ] {
        let (status, body) = import(&state, &url).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert!(message(&body).contains("only http and https"), "{body}");
    }
    for url in [
        format!("http://127.0.0.1:{port}/ogc"),
        format!("http://localhost:{port}/ogc"),
        "http://169.254.169.254/ogc".to_owned(),
        "http://10.0.0.1/ogc".to_owned(),
    ] {
        let (status, body) = register(&state, &url).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert_eq!(body["error"]["code"], "url_not_allowed", "{url}: {body}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the target was reached");
    assert_nothing_stored(&state, dir.path()).await;
}

#[tokio::test]
async fn redirects_are_checked_hop_by_hop_even_from_an_allowed_host() {
    let (port, hits) = target().await;
    let hop = redirector(port).await;
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), |c| {
        c.allowed_url_hosts = vec![format!("127.0.0.1:{hop}")];
    });
    let base = format!("http://127.0.0.1:{hop}");
    for (path, refused_hop, words) in [
        (
            "/to/x.geojson",
            format!("http://127.0.0.1:{port}/x.geojson"),
            "private, loopback or link-local",
        ),
        (
            "/to-localhost/x.geojson",
            format!("http://localhost:{port}/x.geojson"),
            "private, loopback or link-local",
        ),
        (
            "/to-metadata",
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "169.254.169.254",
        ),
        (
            "/to-file",
            "file:///etc/passwd".to_owned(),
            "only http and https",
        ),
    ] {
        let (status, body) = import(&state, &format!("{base}{path}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert_eq!(body["error"]["code"], "url_not_allowed", "{path}: {body}");
        let text = message(&body);
        assert!(
            text.contains(&format!("redirects to {refused_hop}")) && text.contains(words),
            "{path}: {text}"
        );
    }
    // The allowed entry names a port: the target's own port is not allowed.
    let (status, _) = import(&state, &format!("http://127.0.0.1:{port}/x.geojson")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // OGC registration: the collection's description redirects to the target.
    let (status, body) = register(&state, &format!("{base}/to/ogc")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        message(&body).contains(&format!(
            "redirects to http://127.0.0.1:{port}/ogc/collections/pts"
        )),
        "{body}"
    );
    assert_nothing_stored(&state, dir.path()).await;

    // A collection registered on the allowed host whose items redirect to the target: the
    // first use is refused at the redirect, and the layer stays unloaded.
    let (status, dataset) = register(&state, &format!("{base}/ogc")).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    let id = dataset["id"].as_str().unwrap();
    let (status, body) = call(
        &state,
        common::get(&format!("/api/portal/datasets/{id}/layers/pts/features")),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        message(&body).contains(&format!(
            "redirects to http://127.0.0.1:{port}/ogc/collections/pts/items"
        )),
        "{body}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the target was reached");

    // Allowing the target's name lets the same redirect through: the guard, not the network,
    // refused it above.
    let open_dir = tempfile::tempdir().unwrap();
    let open = app_state(open_dir.path(), |c| {
        c.allowed_url_hosts = vec![format!("127.0.0.1:{hop}"), format!("LocalHost:{port}")];
    });
    let (status, dataset) = import(&open, &format!("{base}/to-localhost/x.geojson")).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["layers"][0]["feature_count"], 1);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn fetched_bodies_stay_under_the_size_limits() {
    let (port, _hits) = target().await;
    let hop = redirector(port).await;
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), |c| {
        c.max_upload_mb = 1;
        c.allowed_url_hosts = vec![format!("127.0.0.1:{port}"), format!("127.0.0.1:{hop}")];
    });
    let (status, body) = import(&state, &format!("http://127.0.0.1:{port}/big.geojson")).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(message(&body).contains("GEOMILL_MAX_UPLOAD_MB"), "{body}");
    // A service description is read up to 4 MiB.
    let (status, body) = register(&state, &format!("http://127.0.0.1:{hop}/huge")).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_nothing_stored(&state, dir.path()).await;
}

#[tokio::test]
async fn a_service_answering_a_gdal_description_of_other_sources_is_refused() {
    let (port, hits) = target().await;
    // A WFS whose GetFeature answers a VRT pointing GDAL at the target.
    let vrt = format!(
        "<OGRVRTDataSource><OGRVRTLayer name=\"pts\"><SrcDataSource>/vsicurl/http://127.0.0.1:{port}/x.geojson</SrcDataSource></OGRVRTLayer></OGRVRTDataSource>"
    );
    let wfs = Router::new().route(
        "/wfs",
        get(move |uri: Uri| {
            let vrt = vrt.clone();
            async move {
                if uri.query().unwrap_or_default().contains("GetFeature") {
                    vrt
                } else {
                    "<xsd:schema xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\"/>".to_owned()
                }
            }
        }),
    );
    let wfs_port = serve(wfs).await;
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), |c| {
        c.allowed_url_hosts = vec![format!("127.0.0.1:{wfs_port}")];
    });
    let body = json!({"url": format!("http://127.0.0.1:{wfs_port}/wfs"), "service_type": "WFS", "layer_name": "pts"});
    let (status, dataset) = call(&state, post_json("/datasets/ogc", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    let id = dataset["id"].as_str().unwrap();
    let (status, body) = call(
        &state,
        common::get(&format!("/api/portal/datasets/{id}/layers/pts/features")),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "unsafe_file", "{body}");
    assert!(message(&body).contains("OGRVRTDataSource"), "{body}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "GDAL reached the target");
}
