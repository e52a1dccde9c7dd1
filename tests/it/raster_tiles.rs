//! Raster datasets on the map through the HTTP API: terra's `elev.tif` and stars' Landsat scene
//! uploaded, their TileJSON (bounds, zoom, the default 2-98 % stretch against numpy), and PNG
//! tiles whose pixels equal rasterio's warp of the same tile (nearest, nodata transparent)
//! coloured with the asked ramp; bad tile requests answered 4xx naming the problem.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::PathBuf;

use axum::http::StatusCode;
use serde_json::Value;

use crate::common::real::run_python;
use crate::common::uploads::upload;
use crate::common::{call, call_raw, get, test_state};

/// Debian's R packages' example data, unpacked by `scripts/setup.sh test`.
fn r_data(file: &str) -> PathBuf {
    let deps = std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    PathBuf::from(deps).join("r-raster-data").join(file)
}

/// rasterio's warp of band `band` of a raster into a 256 × 256 Web Mercator tile (nearest;
/// `null` where no valid cell lands), and the 2nd and 98th percentiles of its valid cells.
const REFERENCE: &str = r#"
import sys, json
import numpy as np, rasterio
from rasterio.warp import reproject, Resampling
from rasterio.transform import from_bounds
path, band = sys.argv[1], int(sys.argv[2])
west, south, east, north = map(float, sys.argv[3:7])
with rasterio.open(path) as src:
    tile = np.full((256, 256), np.nan, dtype="float64")
    reproject(rasterio.band(src, band), tile, src_nodata=src.nodata,
              dst_transform=from_bounds(west, south, east, north, 256, 256),
              dst_crs="EPSG:3857", dst_nodata=np.nan, resampling=Resampling.nearest)
    cells = src.read(band, masked=True).compressed().astype("float64")
print(json.dumps({
    "tile": [None if np.isnan(v) else float(v) for v in tile.ravel()],
    "p2": [float(np.percentile(cells, 2, method=m)) for m in ("lower", "higher")],
    "p98": [float(np.percentile(cells, 98, method=m)) for m in ("lower", "higher")],
    "min": float(cells.min()), "max": float(cells.max()),
}))
"#;

/// Tile z/x/y's bounds in Web Mercator metres.
fn mercator_bounds(z: u32, x: u32, y: u32) -> [f64; 4] {
    let half = 20_037_508.342_789_244;
    let side = 2.0 * half / f64::from(1_u32 << z);
    let west = -half + f64::from(x) * side;
    let north = half - f64::from(y) * side;
    [west, north - side, west + side, north]
}

fn reference(path: &std::path::Path, band: usize, bounds: [f64; 4]) -> Value {
    let args: Vec<String> = [path.display().to_string(), band.to_string()]
        .into_iter()
        .chain(bounds.iter().map(f64::to_string))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    serde_json::from_str(&run_python(REFERENCE, &args)).unwrap()
}

/// The RGBA pixels of a PNG tile.
fn pixels(png_bytes: &[u8]) -> Vec<[u8; 4]> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    assert_eq!((frame.width, frame.height), (256, 256));
    assert_eq!(frame.color_type, png::ColorType::Rgba);
    buffer[..frame.buffer_size()]
        .chunks(4)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect()
}

async fn upload_file(state: &geomill::state::AppState, file: &str) -> String {
    upload(state, &[(file, std::fs::read(r_data(file)).unwrap())]).await
}

#[tokio::test]
async fn raster_tiles_are_rasterios_warp_through_the_ramp() {
    let (_dir, state) = test_state();
    let elev = upload_file(&state, "elev.tif").await;

    // TileJSON: where the raster is, how deep its cells go, the stretch its tiles carry.
    let (status, document) = call(&state, get(&format!("/rasters/{elev}/tiles"))).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    let bounds: Vec<f64> = document["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    // gdalinfo's corners of elev.tif.
    for (got, want) in bounds
        .iter()
        .zip([5.741_666_7, 49.441_666_7, 6.533_333_3, 50.191_666_7])
    {
        assert!((got - want).abs() < 1e-6, "bounds {bounds:?}");
    }
    // 30" cells are 928 m wide in Web Mercator: zoom 8's pixels (611 m) are the first finer.
    assert_eq!(document["maxzoom"], 8, "{document}");
    let truth = reference(&r_data("elev.tif"), 1, mercator_bounds(8, 132, 86));
    let range = &document["legend"]["ranges"][0];
    let (low, high) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
    // GDAL's histogram has 1,024 buckets over min..max: each cut is a bucket's middle, within a
    // bucket of the cells on either side of the percentile.
    let bucket = (truth["max"].as_f64().unwrap() - truth["min"].as_f64().unwrap()) / 1024.0;
    for (cut, name) in [(low, "p2"), (high, "p98")] {
        let (below, above) = (
            truth[name][0].as_f64().unwrap(),
            truth[name][1].as_f64().unwrap(),
        );
        assert!(
            cut >= below - bucket && cut <= above + bucket,
            "{name}: {cut} against numpy's {below}..{above} ({document})"
        );
    }
    assert_eq!(document["legend"]["bands"], serde_json::json!([1]));
    let template = document["tiles"][0].as_str().unwrap();
    assert!(
        template.contains("/{z}/{x}/{y}.png?bands=1&rescale="),
        "{template}"
    );

    // Tile 8/132/86 holds the raster's northern half and empty land above it: rasterio's warp
    // of that tile, through the grey ramp over the raster's full range, pixel for pixel.
    let (status, bytes) = call_raw(
        &state,
        get(&format!(
            "/rasters/{elev}/tiles/8/132/86.png?ramp=greys&rescale=141,547"
        )),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let drawn = pixels(&bytes);
    let cells = truth["tile"].as_array().unwrap();
    let (mut valid, mut differing) = (0, 0);
    for (pixel, cell) in drawn.iter().zip(cells) {
        let expected = cell.as_f64().map(|v| {
            let grey = ((v - 141.0) / 406.0).clamp(0.0, 1.0) * 255.0;
            [grey.round() as u8; 3]
        });
        valid += usize::from(expected.is_some());
        let same = match expected {
            None => pixel[3] == 0,
            Some(grey) => pixel[3] == 255 && pixel[..3] == grey,
        };
        differing += usize::from(!same);
    }
    assert!(valid > 3_000 && valid < 60_000, "{valid} valid pixels");
    // A pixel centre on a cell edge is a tie GDAL versions may break apart: at most a few.
    assert!(
        differing * 1000 < cells.len(),
        "{differing} pixels differ from rasterio"
    );

    // A tile far from the raster is transparent; the same tile again is served from the
    // cache with its ETag, and If-None-Match answers 304.
    let (status, far) = call_raw(&state, get(&format!("/rasters/{elev}/tiles/8/10/10.png"))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(pixels(&far).iter().all(|p| p[3] == 0));
    let tile_uri = format!("/rasters/{elev}/tiles/8/132/86.png");
    let first = geomill::api::app(state.clone());
    let response = tower::ServiceExt::oneshot(first, get(&tile_uri))
        .await
        .unwrap();
    let etag = response.headers()["etag"].clone();
    let mut again = get(&tile_uri);
    again.headers_mut().insert("if-none-match", etag);
    let response = tower::ServiceExt::oneshot(geomill::api::app(state.clone()), again)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);

    // Three bands of the Landsat scene as RGB: each band stretched on its own.
    let scene = upload_file(&state, "L7_ETMs.tif").await;
    let (status, document) =
        call(&state, get(&format!("/rasters/{scene}/tiles?bands=3,2,1"))).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    assert_eq!(document["legend"]["ranges"].as_array().unwrap().len(), 3);
    assert_eq!(document["legend"]["ramp"], Value::Null);
}

#[tokio::test]
async fn bad_tile_requests_are_refused_naming_the_problem() {
    let (_dir, state) = test_state();
    let elev = upload_file(&state, "elev.tif").await;
    let parts: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            (
                format!("lux.{ext}"),
                std::fs::read(r_data(&format!("lux.{ext}"))).unwrap(),
            )
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = parts.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let lux = upload(&state, &files).await;
    let missing = uuid::Uuid::new_v4();
    for (uri, status, says) in [
        (
            format!("/rasters/{elev}/tiles/8/132/86.png?bands=2"),
            StatusCode::BAD_REQUEST,
            "band 2 is out of range",
        ),
        (
            format!("/rasters/{elev}/tiles/8/132/86.png?bands=1,1"),
            StatusCode::BAD_REQUEST,
            "one band",
        ),
        (
            format!("/rasters/{elev}/tiles/8/132/86.png?rescale=1,2,3"),
            StatusCode::BAD_REQUEST,
            "rescale",
        ),
        (
            format!("/rasters/{elev}/tiles/8/132/86.png?rescale=1,x"),
            StatusCode::BAD_REQUEST,
            "not a number",
        ),
        (
            format!("/rasters/{elev}/tiles/8/132/86.png?ramp=jet"),
            StatusCode::BAD_REQUEST,
            "viridis",
        ),
        (
            format!("/rasters/{elev}/tiles/8/132/86.png?resampling=cubic"),
            StatusCode::BAD_REQUEST,
            "bilinear",
        ),
        (
            format!("/rasters/{elev}/tiles/8/132/86.jpg"),
            StatusCode::BAD_REQUEST,
            "{y}.png",
        ),
        (
            format!("/rasters/{elev}/tiles/23/0/0.png"),
            StatusCode::BAD_REQUEST,
            "zoom levels",
        ),
        (
            format!("/rasters/{elev}/tiles/2/4/0.png"),
            StatusCode::BAD_REQUEST,
            "outside the tile matrix",
        ),
        (
            format!("/rasters/{lux}/tiles/0/0/0.png"),
            StatusCode::NOT_FOUND,
            "not a raster",
        ),
        (
            format!("/rasters/{missing}/tiles"),
            StatusCode::NOT_FOUND,
            "no dataset",
        ),
        (
            "/rasters/not-an-id/tiles".to_owned(),
            StatusCode::BAD_REQUEST,
            "not a UUID",
        ),
        (
            format!("/ogc/collections/{lux}.lux/map?raster={lux}"),
            StatusCode::NOT_FOUND,
            "not a raster",
        ),
        (
            format!("/rasters/{elev}/map?ramp=jet"),
            StatusCode::BAD_REQUEST,
            "viridis",
        ),
    ] {
        let (got, body) = call(&state, get(&uri)).await;
        assert_eq!(got, status, "{uri}: {body}");
        assert!(body.to_string().contains(says), "{uri}: {body}");
    }
}
