//! The OGC API's HTML encoding (what a browser is answered, what `f=html` asks for) and job
//! results published as collections, read back by GDAL's OAPIF driver from the real server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::{Duration, Instant};

use common::gdal;
use common::http::HttpApi;
use reqwest::StatusCode;
use serde_json::{Value, json};

const BROWSER_ACCEPT: &str =
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

/// The real server with the shared world GeoPackage uploaded; answers the dataset id too.
async fn with_world() -> (HttpApi, String) {
    let api = HttpApi::start(&[]);
    let id = api.upload_world().await;
    (api, id)
}

/// Status and JSON body of a GET that asks for JSON.
async fn json_of(api: &HttpApi, path: &str) -> (StatusCode, Value) {
    let (status, _, body) = api.get_text(path, "application/json").await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// Polls a job until it has ended; panics after two minutes.
async fn finished(api: &HttpApi, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let (_, job) = api.get(&format!("/jobs/{id}")).await;
        if matches!(
            job["status"].as_str(),
            Some("COMPLETED" | "FAILED" | "CANCELLED")
        ) {
            return job;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_get_html_pages_and_clients_get_json() {
    let (api, dataset) = with_world().await;
    let countries = format!("{dataset}.countries");

    // A browser's Accept header gets HTML; a JSON client, or none, gets JSON.
    for path in [
        "/ogc".to_owned(),
        "/ogc/conformance".to_owned(),
        "/ogc/collections".to_owned(),
        format!("/ogc/collections/{countries}"),
        format!("/ogc/collections/{countries}/items?limit=5"),
        format!("/ogc/collections/{countries}/items/1"),
    ] {
        let (status, content_type, body) = api.get_text(&path, BROWSER_ACCEPT).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert!(
            content_type.starts_with("text/html"),
            "{path}: {content_type}"
        );
        assert!(body.starts_with("<!doctype html>"), "{path}: {body}");
        let (status, content_type, body) = api.get_text(&path, "*/*").await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(content_type.contains("json"), "{path}: {content_type}");
        serde_json::from_str::<Value>(&body).unwrap();
        // `f` overrides the header both ways.
        let separator = if path.contains('?') { '&' } else { '?' };
        let (_, content_type, _) = api
            .get_text(&format!("{path}{separator}f=html"), "*/*")
            .await;
        assert!(content_type.starts_with("text/html"), "{path}");
        let (_, content_type, _) = api
            .get_text(&format!("{path}{separator}f=json"), BROWSER_ACCEPT)
            .await;
        assert!(content_type.contains("json"), "{path}: {content_type}");
    }

    // The pages say what the JSON says: the collection list names every collection, a page of
    // items shows the same features with their attributes, and links stay in HTML.
    let (_, _, listing) = api.get_text("/ogc/collections?f=html", "*/*").await;
    for layer in ["countries", "cities"] {
        assert!(listing.contains(&format!("{dataset}.{layer}")), "{layer}");
    }
    let (_, page) = json_of(
        &api,
        &format!("/ogc/collections/{countries}/items?limit=3&offset=3"),
    )
    .await;
    let (_, _, html) = api
        .get_text(
            &format!("/ogc/collections/{countries}/items?limit=3&offset=3&f=html"),
            "*/*",
        )
        .await;
    for feature in page["features"].as_array().unwrap() {
        let name = feature["properties"]["name"].as_str().unwrap();
        assert!(html.contains(name), "{name} missing from the page");
    }
    assert!(
        html.contains("offset=6") && html.contains("f=html"),
        "{html}"
    );
    assert!(html.contains("offset=0"), "no prev link: {html}");

    // HTML is declared, and unknown encodings are refused.
    let (_, conformance) = json_of(&api, "/ogc/conformance").await;
    assert!(conformance["conformsTo"].to_string().contains("conf/html"));
    for path in [
        "/ogc?f=xml".to_owned(),
        format!("/ogc/collections/{countries}/items?f=csv"),
        "/ogc/collections?colour=red".to_owned(),
    ] {
        let (status, body) = json_of(&api, &path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert!(body["error"]["message"].is_string(), "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_pages_escape_what_the_data_holds() {
    let hostile = json!({"type": "FeatureCollection", "features": [{"type": "Feature",
        "properties": {"label": "<script>alert(1)</script>"},
        "geometry": {"type": "Point", "coordinates": [1, 2]}}]});
    let api = HttpApi::start(&[]);
    let dataset = api
        .upload("hostile.geojson", hostile.to_string().into_bytes())
        .await;
    let layer = dataset["layers"][0]["name"].as_str().unwrap();
    let collection = format!("{}.{layer}", dataset["id"].as_str().unwrap());
    let (_, items) = json_of(&api, &format!("/ogc/collections/{collection}/items")).await;
    let feature_id = &items["features"][0]["id"];
    for path in [
        format!("/ogc/collections/{collection}/items?f=html"),
        format!("/ogc/collections/{collection}/items/{feature_id}?f=html"),
    ] {
        let (status, _, html) = api.get_text(&path, "*/*").await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(!html.contains("<script>"), "{path}: {html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{path}: {html}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_job_results_are_collections_gdal_reads() {
    let (api, dataset) = with_world().await;
    let pipeline = json!({"name": "big", "steps": [
        {"id": "big", "capability": "filter", "input": "countries",
         "params": {"where": "pop_est > 50000000"}}
    ]});

    // Asked for at submission: published when the job completes.
    let (status, job) = api
        .post(
            "/jobs",
            &json!({"name": "populous", "dataset_id": dataset, "pipeline": pipeline, "publish": true}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let job_id = job["id"].as_str().unwrap();
    let done = finished(&api, job_id).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    let features = done["result"]["features"].as_i64().unwrap();
    assert!(features > 5, "{done}");

    // Publishing again answers the same dataset.
    let (status, published) = api
        .post(&format!("/jobs/{job_id}/publish"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{published}");
    let collection = published["collections"][0].as_str().unwrap().to_owned();
    assert_eq!(published["dataset"]["name"], "populous");

    // GDAL's OAPIF driver reads the published result, feature for feature.
    let oapif = format!("OAPIF:{}", api.server.url("/ogc"));
    let summary = gdal("ogrinfo", &["-ro", "-so", &oapif, &collection]);
    let count: i64 = summary
        .lines()
        .find_map(|l| l.strip_prefix("Feature Count: "))
        .unwrap_or_else(|| panic!("{summary}"))
        .trim()
        .parse()
        .unwrap();
    assert_eq!(count, features, "{summary}");
    let (status, content_type, _) = api
        .get_text(
            &format!("/ogc/collections/{collection}/tiles/0/0/0.mvt"),
            "*/*",
        )
        .await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::OK, "application/vnd.mapbox-vector-tile")
    );

    // Without the flag, a job's result is published on request (201), once.
    let (_, plain) = api
        .post(
            "/jobs",
            &json!({"name": "plain", "dataset_id": dataset, "pipeline": pipeline}),
        )
        .await;
    let plain_id = plain["id"].as_str().unwrap();
    assert_eq!(finished(&api, plain_id).await["status"], "COMPLETED");
    let (_, collections) = json_of(&api, "/ogc/collections").await;
    let before = collections["collections"].as_array().unwrap().len();
    let (status, first) = api
        .post(&format!("/jobs/{plain_id}/publish"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, second) = api
        .post(&format!("/jobs/{plain_id}/publish"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(first["dataset"]["id"], second["dataset"]["id"]);
    let (_, collections) = json_of(&api, "/ogc/collections").await;
    assert_eq!(
        collections["collections"].as_array().unwrap().len(),
        before + 1
    );

    // A job that did not complete has nothing to publish; an unknown one is not there.
    let (_, failing) = api
        .post(
            "/jobs",
            &json!({"name": "cancelled", "dataset_id": dataset, "pipeline": pipeline}),
        )
        .await;
    let failing_id = failing["id"].as_str().unwrap();
    api.post(&format!("/jobs/{failing_id}/cancel"), &json!({}))
        .await;
    let ended = finished(&api, failing_id).await;
    if ended["status"] != "COMPLETED" {
        let (status, body) = api
            .post(&format!("/jobs/{failing_id}/publish"), &json!({}))
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
    }
    let (status, _) = api
        .post(&format!("/jobs/{}/publish", uuid_like()), &json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

fn uuid_like() -> &'static str {
    "00000000-0000-4000-8000-000000000000"
}
