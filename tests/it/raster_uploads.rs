//! Raster datasets through the upload path: a GeoTIFF (a float32 grid in a custom Albers CRS,
//! and a tiled three-band Byte raster with overviews in EPSG:4326) is registered as a raster
//! dataset, described, listed and deleted; a text file named `.tif`, a truncated TIFF and a
//! raster without a CRS are refused with a 4xx naming the problem, leaving nothing stored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::Value;

use crate::common::real::run_python;
use crate::common::uploads::try_upload;
use crate::common::{call, get, test_state};

/// rasterstats' test data, unpacked by `scripts/setup.sh test`.
fn rasterstats_data() -> PathBuf {
    let deps = std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    PathBuf::from(deps).join("rasterstats-0.21.0-data")
}

/// Writes GeoTIFFs with rasterio: `rgb.tif` (3 Byte bands, 256 x 200, EPSG:4326, tiled, with
/// overviews) and `no_crs.tif` (one band, no CRS).
const WRITE: &str = r#"
import sys
import numpy as np, rasterio
from rasterio.transform import from_origin
folder = sys.argv[1]
rng = np.random.default_rng(3)
data = rng.integers(0, 255, size=(3, 200, 256), dtype=np.uint8)
profile = dict(driver="GTiff", width=256, height=200, count=3, dtype="uint8", crs="EPSG:4326",
               transform=from_origin(10.0, 50.0, 0.01, 0.01), tiled=True, blockxsize=128,
               blockysize=128, nodata=0)
with rasterio.open(f"{folder}/rgb.tif", "w", **profile) as out:
    out.write(data)
    out.build_overviews([2, 4], rasterio.enums.Resampling.average)
profile.update(count=1, crs=None, nodata=None, tiled=False)
del profile["blockxsize"], profile["blockysize"]
with rasterio.open(f"{folder}/no_crs.tif", "w", **profile) as out:
    out.write(data[:1])
"#;

fn delete(uri: &str) -> Request<Body> {
    Request::builder()
        .method("DELETE")
        .uri(uri)
        .body(Body::empty())
        .unwrap()
}

async fn assert_nothing_stored(state: &geomill::state::AppState, dir: &Path, case: &str) {
    let (_, page) = call(state, get("/datasets")).await;
    assert_eq!(page["total"], 0, "{case}: {page}");
    let folders = std::fs::read_dir(dir.join("uploads")).map_or(0, Iterator::count);
    assert_eq!(folders, 0, "{case}: a refused upload left a folder");
}

#[tokio::test]
async fn geotiffs_are_raster_datasets() {
    let (dir, state) = test_state();
    let slope = std::fs::read(rasterstats_data().join("slope.tif")).unwrap();
    let (status, dataset) = try_upload(&state, &[("slope.tif", slope)]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["format"], "GTIFF");
    assert_eq!(dataset["layers"], Value::Array(Vec::new()));
    let raster = &dataset["raster"];
    assert_eq!(
        (raster["width"].as_u64(), raster["height"].as_u64()),
        (Some(84), Some(78))
    );
    assert_eq!(raster["bands"][0]["data_type"], "Float32");
    assert_eq!(raster["bands"][0]["nodata"], -9999.0);
    // A custom Albers CRS without an EPSG code is kept as its WKT.
    assert!(
        dataset["crs"].as_str().unwrap().contains("Albers"),
        "{dataset}"
    );
    let id = dataset["id"].as_str().unwrap().to_owned();
    let (status, fetched) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fetched["raster"], *raster);

    let written = tempfile::tempdir().unwrap();
    run_python(WRITE, &[written.path().to_str().unwrap()]);
    let rgb = std::fs::read(written.path().join("rgb.tif")).unwrap();
    // Sent without an extension: its bytes make it a GeoTIFF.
    let (status, rgb) = try_upload(&state, &[("scene", rgb)]).await;
    assert_eq!(status, StatusCode::CREATED, "{rgb}");
    assert_eq!(rgb["crs"], "EPSG:4326");
    let bands = rgb["raster"]["bands"].as_array().unwrap();
    assert_eq!(bands.len(), 3);
    for band in bands {
        assert_eq!(band["data_type"], "Byte");
        assert_eq!(band["block_size"], serde_json::json!([128, 128]));
        assert_eq!(band["overviews"], 2);
        assert_eq!(band["nodata"], 0.0);
    }
    assert_eq!(
        rgb["raster"]["transform"],
        serde_json::json!([10.0, 0.01, 0.0, 50.0, 0.0, -0.01])
    );
    // The same process reads vector files through DuckDB's own GDAL beside the system GDAL
    // the rasters use: rasterstats' polygons, a Shapefile in the raster's Albers CRS.
    let polygons: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            let name = format!("polygons.{ext}");
            (
                name.clone(),
                std::fs::read(rasterstats_data().join(&name)).unwrap(),
            )
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = polygons
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    let (status, vector) = try_upload(&state, &files).await;
    assert_eq!(status, StatusCode::CREATED, "{vector}");
    assert_eq!(vector["layers"][0]["feature_count"], 2, "{vector}");
    let (_, page) = call(&state, get("/datasets")).await;
    assert_eq!(page["total"], 3, "{page}");

    // The routes of vector datasets answer a raster dataset with a 4xx (tracking: no layer
    // tracked), never a failure; the OGC collections and the dataset list still answer.
    for (request, what) in [
        (get(&format!("/datasets/{id}/styles")), "styles"),
        (get(&format!("/datasets/{id}/tracking_status")), "tracking"),
        (
            get(&format!("/datasets/{id}/layers/slope/stats/value")),
            "field stats",
        ),
        (
            get(&format!("/datasets/{id}/layers/slope/breaks?field=value")),
            "breaks",
        ),
        (
            crate::common::post_json(
                &format!("/datasets/{id}/enable_tracking"),
                &serde_json::json!({}),
            ),
            "enable tracking",
        ),
        (
            crate::common::post_json(
                "/api/pipelines/execute",
                &serde_json::json!({"dataset_id": id, "pipeline": {"name": "p", "steps": [
                    {"id": "b", "capability": "buffer", "input": "slope", "params": {"distance": 1}}
                ]}}),
            ),
            "a pipeline reading it as a layer",
        ),
    ] {
        let (status, body) = call(&state, request).await;
        assert!(!status.is_server_error(), "{what}: {status} {body}");
        if what != "tracking" {
            assert!(status.is_client_error(), "{what}: {status} {body}");
        }
    }
    let (status, collections) = call(&state, get("/ogc/collections")).await;
    assert_eq!(status, StatusCode::OK, "{collections}");

    let (status, _) = call(&state, delete(&format!("/api/portal/datasets/{id}"))).await;
    assert!(status.is_success(), "{status}");
    let (_, page) = call(&state, get("/datasets")).await;
    assert_eq!(page["total"], 2, "{page}");
    assert!(!dir.path().join("uploads").join(&id).exists());
}

#[tokio::test]
async fn bad_rasters_are_refused_by_name_and_nothing_is_stored() {
    let (dir, state) = test_state();
    let slope = std::fs::read(rasterstats_data().join("slope.tif")).unwrap();
    let written = tempfile::tempdir().unwrap();
    run_python(WRITE, &[written.path().to_str().unwrap()]);
    let no_crs = std::fs::read(written.path().join("no_crs.tif")).unwrap();
    let cases: [(&str, Vec<u8>, &str, &str); 3] = [
        (
            "notes.tif",
            b"not a raster at all\n".to_vec(),
            "format_mismatch",
            "GeoTIFF",
        ),
        (
            "cut.tif",
            slope[..300].to_vec(),
            "unreadable_file",
            "not a GeoTIFF raster",
        ),
        (
            "no_crs.tif",
            no_crs,
            "raster_without_crs",
            "no coordinate reference system",
        ),
    ];
    for (name, bytes, code, words) in cases {
        let (status, body) = try_upload(&state, &[(name, bytes)]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{name}: {body}");
        assert_eq!(body["error"]["code"], code, "{name}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{name}: {message}");
        assert_nothing_stored(&state, dir.path(), name).await;
    }
}
