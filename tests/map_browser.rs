//! The map page in a real browser: headless Chromium (software WebGL) loads MapLibre GL JS and
//! the collection's vector tiles from the server, with every other host unreachable, and the
//! screenshot shows the countries drawn.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

use common::{Server, multipart_body, world_gpkg};
use serde_json::Value;

/// The share of the screenshot's pixels in the countries' fill colour (orange over the pale
/// blue background).
fn country_share(png_path: &std::path::Path) -> f64 {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = frame.color_type.samples();
    let pixels = &buffer[..frame.buffer_size()];
    let orange = pixels
        .chunks(channels)
        .filter(|p| {
            let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
            r > 200 && r - b > 60 && g > b
        })
        .count();
    orange as f64 / (pixels.len() / channels) as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_page_draws_the_countries() {
    let maplibre = std::env::var("GEOMILL_MAPLIBRE_DIR")
        .expect("GEOMILL_MAPLIBRE_DIR (set by the Makefile; scripts/setup.sh fetches MapLibre)");
    let server = Server::start(&[("GEOMILL_MAPLIBRE_DIR", maplibre.as_str())]);
    let scratch = tempfile::tempdir().unwrap();
    let gpkg = world_gpkg(scratch.path());
    let (content_type, body) =
        multipart_body(&[("world.gpkg", std::fs::read(&gpkg).unwrap())], None);
    let client = reqwest::Client::new();
    let dataset: Value = client
        .post(server.url("/datasets/upload"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let page = server.url(&format!(
        "/ogc/collections/{}.countries/map",
        dataset["id"].as_str().unwrap()
    ));
    let screenshot = scratch.path().join("map.png");
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--ignore-gpu-blocklist",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=20000",
            "--window-size=1024,600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(&page)
        .output()
        .expect("chromium is installed by scripts/setup.sh test");
    assert!(
        output.status.success() && screenshot.exists(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let share = country_share(&screenshot);
    assert!(
        share > 0.15,
        "only {:.1}% of the screenshot is countries ({})",
        share * 100.0,
        screenshot.display()
    );

    // The assets come from this server, and a missing one is a clear 404.
    let missing = client
        .get(server.url("/ogc/assets/jquery.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), reqwest::StatusCode::NOT_FOUND);
}
