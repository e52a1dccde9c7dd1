//! The map page in a real browser: headless Chromium (software WebGL), driven over WebDriver by
//! Debian's chromedriver, loads MapLibre GL JS and the collection's vector tiles from the server
//! with every other host unreachable; once the page reports the map drawn, its screenshot shows
//! the countries.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Server, world_gpkg};
use serde_json::{Value, json};

/// Debian's chromedriver on a free port, killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Self {
        let port = common::free_port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is installed by scripts/setup.sh test (chromium-driver)");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A WebDriver command; answers its `value`.
async fn command(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Value,
) -> Value {
    let mut request = client.request(method, url);
    if !body.is_null() {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let answer: Value = response.json().await.unwrap();
    answer["value"].clone()
}

/// Standard base64 (what WebDriver screenshots are), decoded.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|group| {
            let bits = group
                .iter()
                .enumerate()
                .fold(0_u32, |bits, (i, d)| bits | (u32::from(*d) << (18 - 6 * i)));
            let bytes = bits.to_be_bytes();
            bytes[1..group.len()].to_vec()
        })
        .collect()
}

/// The share of the screenshot's pixels that `matches` (RGB).
fn share(png_bytes: &[u8], matches: impl Fn(i32, i32, i32) -> bool) -> f64 {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = frame.color_type.samples();
    let pixels = &buffer[..frame.buffer_size()];
    let matching = pixels
        .chunks(channels)
        .filter(|p| matches(i32::from(p[0]), i32::from(p[1]), i32::from(p[2])))
        .count();
    matching as f64 / (pixels.len() / channels) as f64
}

/// The share of the screenshot's pixels in the countries' default fill colour (orange over the
/// pale blue background).
fn country_share(png_bytes: &[u8]) -> f64 {
    share(png_bytes, |r, g, b| r > 200 && r - b > 60 && g > b)
}

/// A server with the map page's assets.
fn map_server() -> Server {
    let maplibre = std::env::var("GEOMILL_MAPLIBRE_DIR")
        .expect("GEOMILL_MAPLIBRE_DIR (set by the Makefile; scripts/setup.sh fetches MapLibre)");
    Server::start(&[("GEOMILL_MAPLIBRE_DIR", maplibre.as_str())])
}

/// Uploads `file` (named `name`) to `server`, opens the map page of its layer `layer` in
/// headless Chromium and waits until the page reports the map drawn; answers how many
/// features the page says it rendered and the share of the screenshot in the fill colour (the
/// screenshot is kept as `map.png` beside `file`).
async fn draw_map(
    server: &Server,
    file: &std::path::Path,
    name: &str,
    layer: &str,
) -> (usize, f64) {
    let (drawn, png_bytes) = draw_styled_map(server, file, name, layer, None).await;
    (drawn, country_share(&png_bytes))
}

/// [`draw_map`] with `style` stored for the layer first; answers the screenshot.
async fn draw_styled_map(
    server: &Server,
    file: &std::path::Path,
    name: &str,
    layer: &str,
    style: Option<Value>,
) -> (usize, Vec<u8>) {
    let client = reqwest::Client::new();
    let dataset = server.upload(file, name).await;
    if let Some(style) = style {
        let stored = client
            .put(server.url(&format!(
                "/datasets/{}/styles?layer={layer}",
                dataset["id"].as_str().unwrap()
            )))
            .json(&style)
            .send()
            .await
            .unwrap();
        assert_eq!(stored.status(), reqwest::StatusCode::OK);
    }
    let page = server.url(&format!(
        "/ogc/collections/{}.{layer}/map",
        dataset["id"].as_str().unwrap()
    ));
    let (status, png_bytes) = screenshot(&page, file).await;
    let drawn: usize = status
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{status}"));
    (drawn, png_bytes)
}

/// Opens `page` in headless Chromium, waits until the page reports the map drawn, and answers
/// what it reports and its screenshot (kept as `map.png` beside `file`).
async fn screenshot(page: &str, file: &std::path::Path) -> (String, Vec<u8>) {
    let client = reqwest::Client::new();
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let capabilities = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
        "binary": "/usr/bin/chromium",
        "args": [
            "--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
            "--ignore-gpu-blocklist", "--no-first-run", "--disable-background-networking",
            "--window-size=1024,600",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            format!("--user-data-dir={}", profile.path().display()),
        ]
    }}}});
    let started = Instant::now();
    let session = loop {
        // chromedriver takes a moment to listen.
        if let Ok(response) = client
            .post(format!("{}/session", driver.url))
            .json(&capabilities)
            .send()
            .await
        {
            let answer: Value = response.json().await.unwrap();
            break answer["value"]["sessionId"]
                .as_str()
                .unwrap_or_else(|| panic!("no session: {answer}"))
                .to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "chromedriver did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let session_url = format!("{}/session/{session}", driver.url);
    command(
        &client,
        reqwest::Method::POST,
        &format!("{session_url}/url"),
        json!({"url": page}),
    )
    .await;

    // The page says when MapLibre has drawn everything it loaded ("rendered N features").
    let started = Instant::now();
    let status = loop {
        let status = command(
            &client,
            reqwest::Method::POST,
            &format!("{session_url}/execute/sync"),
            json!({"script": "return document.getElementById('status').textContent", "args": []}),
        )
        .await;
        let text = status.as_str().unwrap_or_default().to_owned();
        if text.starts_with("rendered") || text.starts_with("error") {
            break text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the map never finished drawing: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let screenshot = command(
        &client,
        reqwest::Method::GET,
        &format!("{session_url}/screenshot"),
        Value::Null,
    )
    .await;
    let png_bytes = base64(screenshot.as_str().unwrap());
    std::fs::write(file.with_file_name("map.png"), &png_bytes).unwrap();
    command(&client, reqwest::Method::DELETE, &session_url, Value::Null).await;
    (status, png_bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_page_draws_the_countries() {
    let server = map_server();
    let scratch = tempfile::tempdir().unwrap();
    let gpkg = world_gpkg(scratch.path());
    let (drawn, share) = draw_map(
        &server,
        std::path::Path::new(&gpkg),
        "world.gpkg",
        "countries",
    )
    .await;
    assert!(drawn > 150, "rendered {drawn} features");
    assert!(
        share > 0.15,
        "only {:.1}% of the screenshot is countries",
        share * 100.0
    );

    // The assets come from this server, and a missing one is a clear 404.
    let missing = reqwest::Client::new()
        .get(server.url("/ogc/assets/jquery.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), reqwest::StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_page_draws_a_real_shaped_layer_of_thousands_of_polygons() {
    // ~3,000 pieces of coastline with invalid polygons, NULL and empty geometries, and land on
    // both sides of the antimeridian (Chukotka, Fiji): the map must open on the data and draw it.
    let server = map_server();
    let scratch = tempfile::tempdir().unwrap();
    let (regions, _) = common::real::real_layers(scratch.path(), 0, 3.5);
    let (drawn, share) = draw_map(&server, &regions, "regions.gpkg", "regions").await;
    assert!(drawn > 1_000, "rendered {drawn} features");
    assert!(
        share > 0.15,
        "only {:.1}% of the screenshot is the layer's polygons",
        share * 100.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_page_draws_a_stored_choropleth() {
    // Three classes of population, each in a colour far from the others and from the
    // background: the screenshot shows each of them.
    let server = map_server();
    let scratch = tempfile::tempdir().unwrap();
    let gpkg = world_gpkg(scratch.path());
    let classes = [
        (10_000_000.0, [27, 158, 119]),
        (60_000_000.0, [217, 95, 2]),
        (1_500_000_000.0, [117, 112, 179]),
    ];
    let ranges: Vec<Value> = classes
        .iter()
        .enumerate()
        .map(|(i, (upper, [r, g, b]))| {
            let lower = if i == 0 { 0.0 } else { classes[i - 1].0 };
            json!({"lower": lower, "upper": upper, "label": format!("class {i}"),
                "symbol": {"color": format!("#{r:02x}{g:02x}{b:02x}")}})
        })
        .collect();
    let style = json!({"renderer": "graduated", "field": "pop_est", "ranges": ranges});
    let (drawn, png_bytes) = draw_styled_map(
        &server,
        std::path::Path::new(&gpkg),
        "world.gpkg",
        "countries",
        Some(style),
    )
    .await;
    assert!(drawn > 150, "rendered {drawn} features");
    for (upper, [r, g, b]) in classes {
        let near = share(&png_bytes, |pr, pg, pb| {
            (pr - r).abs() < 16 && (pg - g).abs() < 16 && (pb - b).abs() < 16
        });
        assert!(
            near > 0.005,
            "the class up to {upper} (#{r:02x}{g:02x}{b:02x}) covers only {:.2}% of the screenshot",
            near * 100.0
        );
    }
    // No country is left in the default colour (#e8a33d): every one falls in a class.
    let default = share(&png_bytes, |r, g, b| {
        (r - 232).abs() < 16 && (g - 163).abs() < 16 && (b - 61).abs() < 16
    });
    assert!(
        default < 0.001,
        "{:.2}% in the default colour",
        default * 100.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_page_draws_a_raster_under_a_vector_layer() {
    // terra's elevation of Luxembourg (a packaged GeoTIFF) through the viridis ramp, under the
    // twelve cantons of lux.shp drawn as magenta outlines over a transparent fill.
    let server = map_server();
    let deps = std::env::var("GEOMILL_DEPS_DIR").expect("GEOMILL_DEPS_DIR (set by the Makefile)");
    let data = std::path::Path::new(&deps).join("r-raster-data");
    let scratch = tempfile::tempdir().unwrap();
    let elev = server.upload(&data.join("elev.tif"), "elev.tif").await;
    let parts: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            (
                format!("lux.{ext}"),
                std::fs::read(data.join(format!("lux.{ext}"))).unwrap(),
            )
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = parts.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let (content_type, body) = common::multipart_body(&files, None);
    let client = reqwest::Client::new();
    let lux: Value = client
        .post(server.url("/datasets/upload"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let lux = lux["id"].as_str().unwrap().to_owned();
    let style = json!({"renderer": "single", "symbol": {"color": "#ffffff", "opacity": 0.0,
        "stroke_color": "#ff00ff", "stroke_width": 0.6}});
    let stored = client
        .put(server.url(&format!("/datasets/{lux}/styles?layer=lux")))
        .json(&style)
        .send()
        .await
        .unwrap();
    assert_eq!(stored.status(), reqwest::StatusCode::OK);
    let page = server.url(&format!(
        "/ogc/collections/{lux}.lux/map?raster={}",
        elev["id"].as_str().unwrap()
    ));
    let (status, png_bytes) = screenshot(&page, &scratch.path().join("lux.shp")).await;
    assert_eq!(status, "rendered 12 features of lux over raster elev.tif");
    // The ramp's colours (viridis: purple through teal to yellow, never magenta or the pale
    // blue background) cover the country (about a ninth of the view), both ends of the ramp
    // among them, and the outlines are drawn over them.
    let purple = |r: i32, g: i32, b: i32| r < 90 && g < 60 && b > 70;
    let teal_green = |r: i32, g: i32, b: i32| g > 80 && g > r && b < 170;
    let yellow = |r: i32, g: i32, b: i32| r > 150 && g > 190 && b < 80;
    let ramp = share(&png_bytes, |r, g, b| {
        purple(r, g, b) || teal_green(r, g, b) || yellow(r, g, b)
    });
    let outline = share(&png_bytes, |r, g, b| r > 200 && g < 80 && b > 200);
    assert!(
        ramp > 0.08,
        "only {:.1}% of the screenshot is the raster",
        ramp * 100.0
    );
    for (end, matches) in [
        ("low", &purple as &dyn Fn(i32, i32, i32) -> bool),
        ("high", &yellow),
    ] {
        let drawn = share(&png_bytes, matches);
        assert!(
            drawn > 0.003,
            "the ramp's {end} end covers {:.2}%",
            drawn * 100.0
        );
    }
    assert!(
        outline > 0.002,
        "only {:.2}% is the cantons' outlines",
        outline * 100.0
    );

    // The raster alone, on its own page.
    let page = server.url(&format!("/rasters/{}/map", elev["id"].as_str().unwrap()));
    let (status, alone) = screenshot(&page, &scratch.path().join("elev.tif")).await;
    assert_eq!(status, "rendered 0 features over raster elev.tif");
    let outline = share(&alone, |r, g, b| r > 200 && g < 80 && b > 200);
    assert!(outline < 0.0001, "no outlines on the raster's own page");
}
