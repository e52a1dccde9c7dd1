//! Exports re-read by independent readers: GDAL's ogrinfo for the GDAL formats, GeoPandas for
//! GeoParquet (Debian's GDAL 3.6 has no Parquet driver).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::post_json as post;

use axum::http::StatusCode;
use common::{call, call_raw, multipart, ogrinfo_summary, shared, test_state};
use geomill::state::AppState;
use serde_json::{Value, json};

async fn boroughs(state: &AppState) -> String {
    let files = [(
        "nybb_16a.zip",
        std::fs::read(shared("nybb_16a.zip")).unwrap(),
    )];
    let (status, dataset) = call(state, multipart("/datasets/upload", &files, None)).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    dataset["id"].as_str().unwrap().to_owned()
}

async fn export(state: &AppState, uri: &str, body: &Value, into: &std::path::Path) {
    let (status, bytes) = call_raw(state, post(uri, body)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{body}: {}",
        String::from_utf8_lossy(&bytes)
    );
    std::fs::write(into, bytes).unwrap();
}

#[tokio::test]
async fn every_gdal_format_reads_back_with_the_same_count_and_crs() {
    let (_dir, state) = test_state();
    let id = boroughs(&state).await;
    let work = tempfile::tempdir().unwrap();
    for (format, file, crs) in [
        ("gpkg", "b.gpkg", Some("EPSG:2263")),
        ("geojson", "b.geojson", Some("EPSG:2263")),
        ("fgb", "b.fgb", Some("EPSG:2263")),
        ("shp", "b.zip", Some("EPSG:2263")),
        ("gml", "b.gml", Some("EPSG:2263")),
        ("kml", "b.kml", Some("EPSG:4326")),
        ("csv", "b.csv", None),
    ] {
        let path = work.path().join(file);
        export(
            &state,
            "/api/portal/datasets/export",
            &json!({"dataset_id": id, "format": format}),
            &path,
        )
        .await;
        let opened = if format == "shp" {
            format!("/vsizip/{}", path.display())
        } else {
            path.display().to_string()
        };
        let layers = common::gdal("ogrinfo", &["-ro", "-q", &opened]);
        let layer = layers
            .lines()
            .next()
            .and_then(|l| l.split(": ").nth(1))
            .map(|l| l.split(' ').next().unwrap_or(l))
            .unwrap()
            .to_owned();
        let (count, epsg) = ogrinfo_summary(&opened, &layer);
        assert_eq!(count, 5, "{format}");
        if let Some(crs) = crs {
            assert_eq!(epsg.as_deref(), Some(crs), "{format}");
        }
    }
    let path = work.path().join("via-export-gpkg.gpkg");
    export(
        &state,
        "/datasets/export-gpkg",
        &json!({"dataset_id": id}),
        &path,
    )
    .await;
    assert_eq!(
        ogrinfo_summary(&path.display().to_string(), "nybb"),
        (5, Some("EPSG:2263".into()))
    );
}

#[tokio::test]
async fn geoparquet_reads_in_geopandas_with_valid_geo_metadata() {
    let (_dir, state) = test_state();
    let id = boroughs(&state).await;
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("b.parquet");
    export(
        &state,
        "/api/portal/datasets/export",
        &json!({"dataset_id": id, "format": "parquet"}),
        &path,
    )
    .await;
    let python = std::env::var("GEOMILL_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = r#"
import json, sys
import geopandas, pyarrow.parquet as pq
frame = geopandas.read_parquet(sys.argv[1])
geo = json.loads(pq.read_schema(sys.argv[1]).metadata[b"geo"])
column = geo["columns"][geo["primary_column"]]
print(json.dumps({
    "rows": len(frame),
    "epsg": frame.crs.to_epsg(),
    "version": geo["version"],
    "primary_column": geo["primary_column"],
    "encoding": column["encoding"],
    "geometry_types": column["geometry_types"],
    "crs_is_projjson": isinstance(column.get("crs"), dict) and "type" in column["crs"],
    "names": sorted(frame["BoroName"]),
}))
"#;
    let output = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python with geopandas (scripts/setup.sh test)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["rows"], 5);
    assert_eq!(report["epsg"], 2263);
    assert_eq!(report["primary_column"], "geom");
    assert_eq!(report["encoding"], "WKB");
    assert!(
        report["version"].as_str().unwrap().starts_with("1."),
        "{report}"
    );
    assert!(report["geometry_types"].as_array().is_some(), "{report}");
    assert_eq!(report["crs_is_projjson"], true, "{report}");
    assert_eq!(
        report["names"],
        json!(["Bronx", "Brooklyn", "Manhattan", "Queens", "Staten Island"])
    );
}

#[tokio::test]
async fn bad_export_requests_are_clear() {
    let (_dir, state) = test_state();
    let id = boroughs(&state).await;
    for (uri, body, expected, words) in [
        (
            "/api/portal/datasets/export",
            json!({"dataset_id": id, "format": "dwg"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not one of",
        ),
        (
            "/api/portal/datasets/export",
            json!({"dataset_id": id, "layer": "nope"}),
            StatusCode::NOT_FOUND,
            "layers: nybb",
        ),
        (
            "/api/portal/datasets/export",
            json!({"dataset_id": "00000000-0000-4000-8000-000000000000"}),
            StatusCode::NOT_FOUND,
            "no dataset",
        ),
        (
            "/api/portal/datasets/export",
            json!({"dataset_id": "x"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not a UUID",
        ),
        (
            "/datasets/export-gpkg",
            json!({"dataset_id": id, "format": "geojson"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "GeoPackages only",
        ),
    ] {
        let (status, answer) = call(&state, post(uri, &body)).await;
        assert_eq!(status, expected, "{answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains(words),
            "{answer}"
        );
    }
}
