//! Field summaries (distinct values, statistics, class breaks) against SpatiaLite on the same
//! file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{call, gdal, get, multipart, shared, test_state};
use geomill::state::AppState;
use serde_json::{Value, json};

async fn countries(state: &AppState) -> String {
    let files: Vec<(&str, Vec<u8>)> = ["shp", "shx", "dbf", "prj", "cpg"]
        .iter()
        .map(|ext| {
            let name: &str = Box::leak(format!("naturalearth_lowres.{ext}").into_boxed_str());
            (
                name,
                std::fs::read(shared(&format!("naturalearth_lowres/{name}"))).unwrap(),
            )
        })
        .collect();
    let (status, dataset) = call(state, multipart("/datasets/upload", &files, None)).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    format!(
        "/datasets/{}/layers/naturalearth_lowres",
        dataset["id"].as_str().unwrap()
    )
}

fn spatialite(sql: &str) -> String {
    let path = shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    gdal(
        "ogrinfo",
        &["-ro", "-q", "-dialect", "SQLite", "-sql", sql, &path],
    )
}

fn value_of(text: &str, field: &str) -> f64 {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(&format!("{field} (")))
        .find_map(|rest| rest.split_once(") = ").map(|(_, v)| v.parse().unwrap()))
        .unwrap()
}

fn breaks_request(base: &str, body: Value) -> Request<Body> {
    Request::post(format!("{base}/breaks"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn distinct_and_stats_match_spatialite() {
    let (_dir, state) = test_state();
    let base = countries(&state).await;
    let (status, body) = call(&state, get(&format!("{base}/distinct/continent"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["distinct"], 8);
    let africa = value_of(
        &spatialite("SELECT count(*) AS n FROM naturalearth_lowres WHERE continent = 'Africa'"),
        "n",
    );
    assert_eq!(
        body["values"][0],
        json!({"value": "Africa", "count": africa as i64})
    );

    let (status, body) = call(&state, get(&format!("{base}/stats/pop_est"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let theirs = spatialite(
        "SELECT count(pop_est) AS n, min(pop_est) AS lo, max(pop_est) AS hi, avg(pop_est) AS mean FROM naturalearth_lowres",
    );
    assert_eq!(body["count"], value_of(&theirs, "n") as i64);
    assert_eq!(body["min"].as_f64().unwrap(), value_of(&theirs, "lo"));
    assert_eq!(body["max"].as_f64().unwrap(), value_of(&theirs, "hi"));
    assert!((body["mean"].as_f64().unwrap() - value_of(&theirs, "mean")).abs() < 1.0);
    let p = &body["quantiles"];
    assert!(p["p05"].as_f64() <= p["p50"].as_f64() && p["p50"].as_f64() <= p["p95"].as_f64());
}

#[tokio::test]
async fn class_breaks_by_every_method() {
    let (_dir, state) = test_state();
    let base = countries(&state).await;
    let (_, stats) = call(&state, get(&format!("{base}/stats/pop_est"))).await;
    for (method, classes) in [("jenks", 5), ("quantile", 4), ("equal_interval", 6)] {
        let (status, body) = call(
            &state,
            breaks_request(
                &base,
                json!({"field": "pop_est", "method": method, "classes": classes}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let bounds: Vec<f64> = body["breaks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_f64().unwrap())
            .collect();
        assert_eq!(bounds.len(), classes, "{method}");
        assert!(
            bounds.windows(2).all(|w| w[0] < w[1]),
            "{method}: {bounds:?}"
        );
        assert_eq!(bounds.last().copied(), stats["max"].as_f64(), "{method}");
    }
    for (body, expected, words) in [
        (
            json!({"field": "pop_est", "method": "jenks", "classes": 1}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "between 2 and 12",
        ),
        (
            json!({"field": "pop_est", "method": "kmeans"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "jenks, quantile, equal_interval, std_dev, pretty or head_tail_breaks",
        ),
        (
            json!({"field": "name", "method": "jenks"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not numeric",
        ),
        (
            json!({"field": "nope", "method": "jenks"}),
            StatusCode::NOT_FOUND,
            "fields: pop_est",
        ),
    ] {
        let (status, answer) = call(&state, breaks_request(&base, body)).await;
        assert_eq!(status, expected, "{answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains(words),
            "{answer}"
        );
    }
    let (status, _) = call(&state, get(&format!("{base}/stats/name"))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = call(&state, get(&format!("{base}/distinct/continent?limit=0"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
