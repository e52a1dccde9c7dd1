//! `GET /catalog/projections`: the EPSG projections of PROJ's database, checked against what
//! GDAL's `gdalsrsinfo` prints for the same codes (name, area of use, bounds, unit), searched,
//! paged, and bad requests answered 4xx.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::process::Command;

use axum::http::StatusCode;
use serde_json::Value;

use crate::common::{call, get, test_state};

/// `gdalsrsinfo -o wkt2 EPSG:<code>`: the CRS's name, its first area of use and bounds (west,
/// south, east, north), and its last length or angle unit.
fn gdal_says(code: u32) -> (String, String, [f64; 4], String) {
    let output = Command::new("gdalsrsinfo")
        .args(["-o", "wkt2", &format!("EPSG:{code}")])
        .output()
        .expect("gdalsrsinfo (gdal-bin)");
    let wkt = String::from_utf8(output.stdout).unwrap();
    let quoted_after = |key: &str| {
        let start = wkt.find(key).unwrap() + key.len();
        wkt[start..].split('"').next().unwrap().to_owned()
    };
    let name = quoted_after("CRS[\"");
    let area = quoted_after("AREA[\"");
    let start = wkt.find("BBOX[").unwrap() + 5;
    let numbers: Vec<f64> = wkt[start..]
        .split(']')
        .next()
        .unwrap()
        .split(',')
        .map(|n| n.trim().parse().unwrap())
        .collect();
    let unit_key = if wkt.contains("LENGTHUNIT[\"US survey foot") {
        "US survey foot"
    } else {
        ""
    };
    let unit = if unit_key.is_empty() {
        let last = wkt.rfind("UNIT[\"").unwrap() + 6;
        wkt[last..].split('"').next().unwrap().to_owned()
    } else {
        unit_key.to_owned()
    };
    // BBOX is south, west, north, east.
    (
        name,
        area,
        [numbers[1], numbers[0], numbers[3], numbers[2]],
        unit,
    )
}

#[tokio::test]
async fn projections_equal_what_gdal_reads_from_proj() {
    let (_dir, state) = test_state();
    for code in [4326, 3857, 32633, 2154, 27700, 2263] {
        let (status, one) = call(&state, get(&format!("/catalog/projections/EPSG:{code}"))).await;
        assert_eq!(status, StatusCode::OK, "{one}");
        let (name, area, bounds, unit) = gdal_says(code);
        assert_eq!(one["code"], format!("EPSG:{code}"));
        assert_eq!(one["name"], name, "{code}");
        assert_eq!(one["area"], area, "{code}");
        let ours: Vec<f64> = one["bounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(ours, bounds, "{code}");
        assert!(
            one["unit"].as_str().unwrap().starts_with(&unit),
            "{code}: {one} against {unit}"
        );
        let (_, bare) = call(&state, get(&format!("/catalog/projections/{code}"))).await;
        assert_eq!(bare, one);
    }
}

#[tokio::test]
async fn projections_are_searched_and_paged() {
    let (_dir, state) = test_state();
    let (status, page) = call(&state, get("/catalog/projections?q=lambert-93")).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let codes: Vec<&str> = page["projections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"EPSG:2154"), "{page}");
    let (_, utm) = call(
        &state,
        get("/catalog/projections?q=UTM%20zone%2033N&limit=500"),
    )
    .await;
    let found = utm["projections"].as_array().unwrap();
    assert!(found.iter().any(|p| p["code"] == "EPSG:32633"), "{utm}");
    assert!(found.iter().all(|p| {
        p["name"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("utm zone 33n")
    }));
    assert_eq!(utm["total"].as_u64().unwrap() as usize, found.len());

    let (_, all) = call(&state, get("/catalog/projections")).await;
    let total = all["total"].as_u64().unwrap();
    assert!(total > 4000, "{total}");
    assert_eq!(all["limit"], 50);
    assert_eq!(all["projections"].as_array().unwrap().len(), 50);
    let (_, second) = call(&state, get("/catalog/projections?limit=10&offset=10")).await;
    assert_eq!(second["projections"][0], all["projections"][10]);
    assert_eq!(second["total"], total);
    let (_, past) = call(&state, get(&format!("/catalog/projections?offset={total}"))).await;
    assert_eq!(past["projections"], Value::Array(Vec::new()));
    let (_, code) = call(&state, get("/catalog/projections?q=EPSG:27700")).await;
    assert_eq!(code["total"], 1, "{code}");
}

#[tokio::test]
async fn bad_projection_requests_are_4xx() {
    let (_dir, state) = test_state();
    for (uri, status, words) in [
        (
            "/catalog/projections/EPSG:99999",
            StatusCode::NOT_FOUND,
            "unknown projection EPSG:99999",
        ),
        (
            "/catalog/projections/lambert",
            StatusCode::BAD_REQUEST,
            "not an EPSG code",
        ),
        (
            "/catalog/projections?limit=0",
            StatusCode::BAD_REQUEST,
            "limit",
        ),
        (
            "/catalog/projections?limit=501",
            StatusCode::BAD_REQUEST,
            "limit",
        ),
        (
            "/catalog/projections?offset=-1",
            StatusCode::BAD_REQUEST,
            "offset",
        ),
    ] {
        let (got, body) = call(&state, get(uri)).await;
        assert_eq!(got, status, "{uri}: {body}");
        assert!(body.to_string().contains(words), "{uri}: {body}");
    }
}
