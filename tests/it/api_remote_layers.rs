//! Remote layers registered with `POST /datasets/ogc`: an OGC API Features service and a WFS
//! (both served by this test on 127.0.0.1 from Natural Earth data written by GDAL) are registered
//! without a download, fetched once on first use, and read back like uploads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use common::{call, gdal, get, multipart, ogrinfo_summary, post_json, shared, test_state};
use geomill::config::Config;
use geomill::state::AppState;
use serde_json::{Value, json};

/// What the fake services serve, and how often features were asked for.
struct Services {
    features: Vec<Value>,
    gml: Vec<u8>,
    item_pages: AtomicUsize,
    /// While set, items answer 503.
    items_down: AtomicBool,
    get_feature_calls: AtomicUsize,
}

/// Largest page the fake OGC API answers, to make the client follow `next` links.
const SERVER_PAGE: usize = 50;

async fn collection(Path(id): Path<String>) -> Response {
    if id == "countries" {
        Json(json!({"id": "countries", "title": "Countries", "links": []})).into_response()
    } else {
        (StatusCode::NOT_FOUND, "no such collection").into_response()
    }
}

async fn items(
    State(services): State<Arc<Services>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if id != "countries" {
        return (StatusCode::NOT_FOUND, "no such collection").into_response();
    }
    if services.items_down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance").into_response();
    }
    services.item_pages.fetch_add(1, Ordering::SeqCst);
    let limit: usize = query
        .get("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(10)
        .min(SERVER_PAGE);
    let offset: usize = query
        .get("offset")
        .and_then(|o| o.parse().ok())
        .unwrap_or(0);
    let total = services.features.len();
    let page: Vec<Value> = services
        .features
        .iter()
        .skip(offset)
        .take(limit)
        .cloned()
        .collect();
    let mut links = vec![json!({"rel": "self", "href": "items"})];
    if offset + limit < total {
        links.push(json!({"rel": "next", "type": "application/geo+json",
            "href": format!("items?offset={}&limit={limit}", offset + limit)}));
    }
    Json(
        json!({"type": "FeatureCollection", "features": page, "numberMatched": total,
        "numberReturned": limit.min(total.saturating_sub(offset)), "links": links}),
    )
    .into_response()
}

async fn wfs(
    State(services): State<Arc<Services>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let layer = query.get("typeNames").cloned().unwrap_or_default();
    if layer != "countries" {
        // MapServer's way: an exception report with status 200.
        return "<ows:ExceptionReport><ows:Exception exceptionCode=\"InvalidParameterValue\"><ows:ExceptionText>Unknown feature type</ows:ExceptionText></ows:Exception></ows:ExceptionReport>".into_response();
    }
    match query.get("request").map(String::as_str) {
        Some("DescribeFeatureType") => {
            "<xsd:schema xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\"/>".into_response()
        }
        Some("GetFeature") => {
            services.get_feature_calls.fetch_add(1, Ordering::SeqCst);
            services.gml.clone().into_response()
        }
        _ => (StatusCode::BAD_REQUEST, "unsupported request").into_response(),
    }
}

/// Starts both services; answers their base URL and the shared counters.
async fn start_services(scratch: &std::path::Path) -> (String, Arc<Services>) {
    let countries = shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let geojson: Value = serde_json::from_str(&gdal(
        "ogr2ogr",
        &["-f", "GeoJSON", "/vsistdout/", &countries],
    ))
    .unwrap();
    let gml_path = scratch.join("countries.gml").display().to_string();
    gdal(
        "ogr2ogr",
        &[
            "-f",
            "GML",
            "-dsco",
            "FORMAT=GML3.2",
            &gml_path,
            &countries,
            "-nln",
            "countries",
        ],
    );
    let services = Arc::new(Services {
        features: geojson["features"].as_array().unwrap().clone(),
        gml: std::fs::read(&gml_path).unwrap(),
        item_pages: AtomicUsize::new(0),
        items_down: AtomicBool::new(false),
        get_feature_calls: AtomicUsize::new(0),
    });
    let app = axum::Router::new()
        .route("/ogc/collections/{id}", axum::routing::get(collection))
        .route("/ogc/collections/{id}/items", axum::routing::get(items))
        .route("/wfs", axum::routing::get(wfs))
        .with_state(services.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}"), services)
}

/// A state that may fetch from this machine (the services stand for public ones).
fn state_allowing_private(dir: &std::path::Path) -> AppState {
    let mut config = Config::with_data_dir(dir);
    config.allow_private_urls = true;
    AppState::open(config).unwrap()
}

async fn register(state: &AppState, body: Value) -> (StatusCode, Value) {
    call(state, post_json("/datasets/ogc", &body)).await
}

async fn dataset_count(state: &AppState) -> i64 {
    let (_, page) = call(state, get("/datasets")).await;
    page["total"].as_i64().unwrap()
}

fn sorted_names(features: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = features
        .iter()
        .map(|f| f["properties"]["name"].to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn ogc_api_collections_are_fetched_once_on_first_use() {
    let dir = tempfile::tempdir().unwrap();
    let (base, services) = start_services(dir.path()).await;
    let state = state_allowing_private(&dir.path().join("data"));
    let shapefile = shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let (expected_count, _) = ogrinfo_summary(&shapefile, "naturalearth_lowres");

    // A collection URL is accepted for the landing page.
    let (status, dataset) = register(
        &state,
        json!({"url": format!("{base}/ogc/collections/countries"), "service_type": "OGC API - Features",
            "layer_name": "countries", "name": "world"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["format"], "OAPIF");
    assert_eq!(dataset["crs"], "EPSG:4326");
    assert_eq!(dataset["remote"]["url"], format!("{base}/ogc"));
    assert_eq!(dataset["remote"]["loaded_at"], Value::Null);
    assert_eq!(dataset["layers"][0]["feature_count"], Value::Null);
    let id = dataset["id"].as_str().unwrap().to_owned();
    let (status, _) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        services.item_pages.load(Ordering::SeqCst),
        0,
        "registering and reading the dataset downloads no feature"
    );

    // A service that fails on first use: a 502 naming it, and the layer stays unloaded.
    let uri = format!("/api/portal/datasets/{id}/layers/countries/features?limit=1000");
    services.items_down.store(true, Ordering::SeqCst);
    let (status, answer) = call(&state, get(&uri)).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
    assert_eq!(answer["error"]["code"], "remote_unavailable");
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("503"),
        "{answer}"
    );
    let (_, unchanged) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(unchanged["remote"]["loaded_at"], Value::Null);
    services.items_down.store(false, Ordering::SeqCst);

    // Two readers at once: the collection is fetched once, every page of it.
    let ((status_a, page_a), (status_b, page_b)) =
        tokio::join!(call(&state, get(&uri)), call(&state, get(&uri)));
    assert_eq!(
        (status_a, status_b),
        (StatusCode::OK, StatusCode::OK),
        "{page_a} {page_b}"
    );
    assert_eq!(page_a["total"], expected_count);
    assert_eq!(page_b["total"], expected_count);
    let pages = expected_count as usize / SERVER_PAGE + 1;
    assert_eq!(services.item_pages.load(Ordering::SeqCst), pages);
    let features = page_a["features"].as_array().unwrap();
    let served_names: Vec<String> = {
        let mut names: Vec<String> = services
            .features
            .iter()
            .map(|f| f["properties"]["name"].to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(sorted_names(features), served_names);

    let (_, dataset) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(dataset["layers"][0]["feature_count"], expected_count);
    assert_eq!(dataset["layers"][0]["name"], "countries");
    assert!(dataset["remote"]["loaded_at"].is_string(), "{dataset}");
    let (status, _) = call(&state, get(&uri)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        services.item_pages.load(Ordering::SeqCst),
        pages,
        "a loaded layer is not fetched again"
    );
    let (status, _) = call(
        &state,
        axum::http::Request::delete(format!("/api/portal/datasets/{id}"))
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await;
    assert!(status.is_success(), "{status}");
    assert_eq!(dataset_count(&state).await, 0);
}

#[tokio::test]
async fn wfs_layers_load_on_first_query_with_lon_lat_axes() {
    let dir = tempfile::tempdir().unwrap();
    let (base, services) = start_services(dir.path()).await;
    let state = state_allowing_private(&dir.path().join("data"));
    let (status, dataset) = register(
        &state,
        json!({"url": format!("{base}/wfs?SERVICE=WFS&REQUEST=GetCapabilities"), "service_type": "WFS",
            "layer_name": "countries", "name": "wfs_countries"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["format"], "WFS");
    assert_eq!(dataset["remote"]["url"], format!("{base}/wfs"));
    assert_eq!(services.get_feature_calls.load(Ordering::SeqCst), 0);
    let id = dataset["id"].as_str().unwrap().to_owned();

    // SQL naming the dataset fetches it.
    let (status, rows) = call(
        &state,
        post_json(
            "/api/portal/sql/execute",
            &json!({"query": "SELECT count(*) AS n FROM wfs_countries"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    let shapefile = shared("naturalearth_lowres/naturalearth_lowres.shp");
    let (expected_count, _) =
        ogrinfo_summary(&shapefile.display().to_string(), "naturalearth_lowres");
    assert_eq!(rows["rows"][0]["n"], expected_count);
    assert_eq!(services.get_feature_calls.load(Ordering::SeqCst), 1);

    // GML 3.2 in EPSG:4326 is written lat/lon; the loaded layer answers lon/lat like the
    // shapefile: the same countries meet a European box in both.
    let upload_files: Vec<(&str, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            (
                match *ext {
                    "shp" => "countries.shp",
                    "shx" => "countries.shx",
                    "dbf" => "countries.dbf",
                    _ => "countries.prj",
                },
                std::fs::read(shapefile.with_extension(ext)).unwrap(),
            )
        })
        .collect();
    let (status, uploaded) = call(&state, multipart("/datasets/upload", &upload_files, None)).await;
    assert_eq!(status, StatusCode::CREATED, "{uploaded}");
    let uploaded_id = uploaded["id"].as_str().unwrap();
    let europe = "bbox=-10,35,30,60&limit=1000";
    let (_, remote_page) = call(
        &state,
        get(&format!(
            "/api/portal/datasets/{id}/layers/countries/features?{europe}"
        )),
    )
    .await;
    let (_, uploaded_page) = call(
        &state,
        get(&format!(
            "/api/portal/datasets/{uploaded_id}/layers/countries/features?{europe}"
        )),
    )
    .await;
    assert!(
        uploaded_page["total"].as_i64().unwrap() > 20,
        "{uploaded_page}"
    );
    assert_eq!(remote_page["total"], uploaded_page["total"]);
    assert_eq!(
        sorted_names(remote_page["features"].as_array().unwrap()),
        sorted_names(uploaded_page["features"].as_array().unwrap())
    );
    let (_, dataset) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(dataset["crs"], "EPSG:4326");
    assert_eq!(services.get_feature_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn bad_registrations_are_refused_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (base, _services) = start_services(dir.path()).await;
    let state = state_allowing_private(&dir.path().join("data"));
    for (body, status, words) in [
        (
            json!({"url": format!("{base}/ogc"), "service_type": "OAPIF", "layer_name": "rivers"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "does not offer layer \"rivers\"",
        ),
        (
            json!({"url": format!("{base}/wfs"), "service_type": "WFS", "layer_name": "rivers"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "Unknown feature type",
        ),
        (
            json!({"url": format!("{base}/wfs"), "service_type": "WMS", "layer_name": "countries"}),
            StatusCode::BAD_REQUEST,
            "is not WFS or OAPIF",
        ),
        (
            json!({"url": format!("{base}/wfs"), "service_type": "WFS", "layer_name": " "}),
            StatusCode::BAD_REQUEST,
            "layer_name is empty",
        ),
        (
            json!({"url": "file:///etc/passwd", "service_type": "WFS", "layer_name": "countries"}),
            StatusCode::BAD_REQUEST,
            "only http and https",
        ),
    ] {
        let (got, answer) = register(&state, body.clone()).await;
        assert_eq!(got, status, "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{body}: {message}");
    }
    assert_eq!(dataset_count(&state).await, 0);

    // By default a service on a private address is refused before anything is asked of it.
    let (_dir, strict) = test_state();
    let (status, answer) = register(
        &strict,
        json!({"url": format!("{base}/ogc"), "service_type": "OAPIF", "layer_name": "countries"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("private, loopback or link-local")
    );
    assert_eq!(dataset_count(&strict).await, 0);
}
