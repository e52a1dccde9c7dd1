//! Upload + load of a large GeoPackage and exports to FlatGeobuf and GeoParquet through the
//! API, against `ogr2ogr` doing the same conversions in the same run. Prints medians of three
//! runs as features/s and the ratio to ogr2ogr. The input is generated from a fixed seed.
//! `cargo bench --bench embedded_io` (GEOMILL_BENCH_FEATURES, default 1000000).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // a benchmark binary

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use geomill::config::Config;
use geomill::state::AppState;
use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use tower::ServiceExt;

const RUNS: usize = 3;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A GeoPackage of `n` points with attributes, the same for a given `n` (hash-seeded values).
fn generate(path: &str, n: u64) {
    let engine = EmbeddedEngine::open(&EmbeddedOptions::default()).unwrap();
    engine
        .execute_batch(&format!(
            "COPY (SELECT i AS id, 'feature ' || i AS name, CAST(hash(i, 42) % 100000 AS DOUBLE) / 100 AS value, \
             ST_Point(-180 + CAST(hash(i, 7) % 3600000 AS DOUBLE) / 10000, -85 + CAST(hash(i, 11) % 1700000 AS DOUBLE) / 10000) AS geom \
             FROM range({n}) t(i)) TO '{path}' (FORMAT GDAL, DRIVER 'GPKG', SRS 'EPSG:4326', LAYER_NAME 'points')"
        ))
        .unwrap();
}

async fn send(state: &AppState, request: Request<Body>) -> (u16, Vec<u8>) {
    let response = geomill::api::app(state.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    )
}

fn upload_request(bytes: &[u8]) -> Request<Body> {
    let boundary = "bench-boundary";
    let mut body = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"points.gpkg\"\r\n\r\n").into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Request::post("/datasets/upload")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap()
}

fn export_request(id: &str, format: &str) -> Request<Body> {
    Request::post("/api/portal/datasets/export")
        .header("content-type", "application/json")
        .body(Body::from(format!(
            r#"{{"dataset_id": "{id}", "format": "{format}"}}"#
        )))
        .unwrap()
}

fn ogr2ogr(args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = std::process::Command::new("ogr2ogr")
        .args(args)
        .status()
        .unwrap();
    assert!(status.success());
    started.elapsed()
}

fn rate(n: u64, time: Duration) -> String {
    format!(
        "{:>12.0} features/s ({:.2} s)",
        n as f64 / time.as_secs_f64(),
        time.as_secs_f64()
    )
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let n: u64 = std::env::var("GEOMILL_BENCH_FEATURES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("points.gpkg").display().to_string();
    generate(&input, n);
    let bytes = std::fs::read(&input).unwrap();
    println!(
        "input: {n} points, {:.1} MB GeoPackage; medians of {RUNS} runs",
        bytes.len() as f64 / 1e6
    );

    let (mut load, mut fgb, mut parquet, mut peer_fgb) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..RUNS {
        let mut config = Config::with_data_dir(work.path().join(format!("data{run}")));
        config.max_upload_mb = 4096;
        let state = AppState::open(config).unwrap();
        let started = Instant::now();
        let (status, body) = send(&state, upload_request(&bytes)).await;
        load.push(started.elapsed());
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        let id = serde_json::from_slice::<serde_json::Value>(&body).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for (format, samples) in [("fgb", &mut fgb), ("parquet", &mut parquet)] {
            let started = Instant::now();
            let (status, file) = send(&state, export_request(&id, format)).await;
            samples.push(started.elapsed());
            assert!(status == 200 && !file.is_empty());
        }
        let out = work
            .path()
            .join(format!("peer{run}.fgb"))
            .display()
            .to_string();
        peer_fgb.push(ogr2ogr(&["-f", "FlatGeobuf", &out, &input]));
    }
    let (load, fgb, parquet, peer_fgb) =
        (median(load), median(fgb), median(parquet), median(peer_fgb));
    println!("geomill upload + load (GPKG):      {}", rate(n, load));
    println!("geomill export FlatGeobuf:         {}", rate(n, fgb));
    println!("geomill export GeoParquet:         {}", rate(n, parquet));
    println!("ogr2ogr GPKG -> FlatGeobuf:        {}", rate(n, peer_fgb));
    println!(
        "ratio FlatGeobuf export, geomill / ogr2ogr time: {:.2}",
        fgb.as_secs_f64() / peer_fgb.as_secs_f64()
    );
    println!(
        "ratio load + FlatGeobuf export, geomill / ogr2ogr time: {:.2}",
        (load + fgb).as_secs_f64() / peer_fgb.as_secs_f64()
    );
    println!("(Debian's GDAL 3.6 has no Parquet driver: GeoParquet has no ogr2ogr peer here)");
}
