//! Shared test helpers: an in-process app on a temporary data directory, and the real
//! `geomill` binary started on a free port.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support code

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use geomill::config::Config;
use geomill::state::AppState;
use tower::ServiceExt;

pub mod cluster;
pub mod compare;
pub mod golden;
pub mod golden_runs;
pub mod http;
pub mod live;
pub mod pipeline;
pub mod postgis;
pub mod real;
pub mod references;
pub mod roles;
pub mod sources;
pub mod uploads;
pub mod world_server;

/// An app state on its own temporary data directory (kept alive by the returned guard).
pub fn test_state() -> (tempfile::TempDir, AppState) {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = AppState::open(Config::with_data_dir(dir.path())).expect("open state");
    (dir, state)
}

/// Sends one request to the in-process app; returns the status and the body as JSON (or Null).
pub async fn call(state: &AppState, request: Request<Body>) -> (StatusCode, serde_json::Value) {
    let (status, bytes) = call_raw(state, request).await;
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

pub async fn call_raw(state: &AppState, request: Request<Body>) -> (StatusCode, Vec<u8>) {
    let response = geomill::api::app(state.clone())
        .oneshot(request)
        .await
        .expect("infallible");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
        .await
        .expect("body");
    (status, bytes.to_vec())
}

/// A loopback port free at the time of asking (for servers that take a port number).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

pub fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).expect("request")
}

/// The real binary, serving on 127.0.0.1 with a free port, stopped when dropped.
pub struct Server {
    pub child: Child,
    pub base_url: String,
    pub data_dir: tempfile::TempDir,
    pub log: mpsc::Receiver<String>,
}

impl Server {
    pub fn start(extra_env: &[(&str, &str)]) -> Self {
        Self::start_in(tempfile::tempdir().expect("tempdir"), extra_env)
    }

    /// The binary serving `data_dir` (which may hold an earlier server's data).
    pub fn start_in(data_dir: tempfile::TempDir, extra_env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_geomill"));
        command
            .arg("serve")
            .env("GEOMILL_BIND", "127.0.0.1")
            .env("GEOMILL_PORT", "0")
            .env("GEOMILL_DATA_DIR", data_dir.path())
            .env("GEOMILL_LOG_FORMAT", "json")
            // The test cluster's DSN is for the tests that ask for it (through `extra_env`).
            .env_remove("GEOMILL_POSTGIS_DSN")
            // Tests drive every group at full speed; the auth tests set their own values.
            .env("GEOMILL_TIER", "enterprise")
            .env("GEOMILL_RATE_LIMIT", "0")
            .env("GEOMILL_RATE_LIMIT_READS", "0")
            .env_remove("GEOMILL_API_KEYS")
            .env_remove("GEOMILL_API_KEY")
            .env_remove("GEOMILL_ADMIN_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in extra_env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn geomill");
        let stderr = child.stderr.take().expect("stderr");
        let (sender, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let address = loop {
            let line = log
                .recv_timeout(Duration::from_secs(60))
                .expect("geomill did not report its address within 60 s");
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if json["fields"]["message"] == "geomill listening" {
                break json["fields"]["address"]
                    .as_str()
                    .expect("address")
                    .to_owned();
            }
        };
        Self {
            child,
            base_url: format!("http://{address}"),
            data_dir,
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Uploads the file at `path` (as `name`) through `/datasets/upload`; answers the dataset.
    pub async fn upload(&self, path: &std::path::Path, name: &str) -> serde_json::Value {
        let bytes = std::fs::read(path).expect("the file to upload");
        let (content_type, body) = multipart_body(&[(name, bytes)], None);
        let response = reqwest::Client::new()
            .post(self.url("/datasets/upload"))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("upload");
        assert_eq!(
            response.status(),
            reqwest::StatusCode::CREATED,
            "upload of {name}"
        );
        response.json().await.expect("the dataset as JSON")
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(sent.success());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("geomill did not stop within 10 s of SIGTERM");
    }

    /// The log lines not read yet; after the process has exited, all of them up to its end.
    pub fn log_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(line) = self.log.recv_timeout(Duration::from_millis(500)) {
            lines.push(line);
        }
        lines
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A multipart/form-data upload of `files` (name, bytes) to `uri`, with an optional `name` field.
pub fn multipart(uri: &str, files: &[(&str, Vec<u8>)], name: Option<&str>) -> Request<Body> {
    let (content_type, body) = multipart_body(files, name);
    Request::post(uri)
        .header("content-type", content_type)
        .body(Body::from(body))
        .expect("request")
}

/// The content type and body of a multipart/form-data upload of `files`.
pub fn multipart_body(files: &[(&str, Vec<u8>)], name: Option<&str>) -> (String, Vec<u8>) {
    let boundary = "geomill-test-boundary";
    let mut body = Vec::new();
    for (file_name, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    if let Some(name) = name {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n{name}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A file of the shared test data.
pub fn shared(path: &str) -> std::path::PathBuf {
    std::env::current_dir()
        .expect("working directory")
        .join("../shared/data")
        .join(path)
}

/// Runs a GDAL command line tool and returns its standard output.
pub fn gdal(tool: &str, args: &[&str]) -> String {
    let output = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} (gdal-bin): {e}"));
    assert!(
        output.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Feature count and `EPSG:<code>` of a layer as `ogrinfo` reports them.
pub fn ogrinfo_summary(path: &str, layer: &str) -> (i64, Option<String>) {
    let text = gdal("ogrinfo", &["-so", path, layer]);
    let count = text
        .lines()
        .find_map(|l| l.strip_prefix("Feature Count: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("feature count");
    let epsg = text.rfind("ID[\"EPSG\",").map(|at| {
        let rest = &text[at + 10..];
        format!("EPSG:{}", rest.split(']').next().unwrap_or_default())
    });
    (count, epsg)
}

/// A POST with a JSON body.
pub fn post_json(uri: &str, body: &serde_json::Value) -> Request<Body> {
    Request::post(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("request")
}

/// Natural Earth countries and cities as two layers of one GeoPackage, written by GDAL into
/// `dir`; returns its path.
pub fn world_gpkg(dir: &std::path::Path) -> String {
    let path = dir.join("world.gpkg").display().to_string();
    let countries = shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let cities = shared("naturalearth_cities/naturalearth_cities.shp")
        .display()
        .to_string();
    gdal(
        "ogr2ogr",
        &[
            "-f",
            "GPKG",
            &path,
            &countries,
            "-nln",
            "countries",
            "-nlt",
            "PROMOTE_TO_MULTI",
        ],
    );
    gdal(
        "ogr2ogr",
        &["-f", "GPKG", "-update", &path, &cities, "-nln", "cities"],
    );
    path
}

/// An app whose store holds dataset `world` (layers `countries` and `cities`, uploaded from a
/// GeoPackage written by GDAL), with `config` applied; answers the GeoPackage's path too.
pub async fn world_state(
    config: impl FnOnce(&mut Config),
) -> (tempfile::TempDir, AppState, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Config::with_data_dir(dir.path().join("data"));
    config(&mut settings);
    let state = AppState::open(settings).expect("open state");
    let gpkg = world_gpkg(dir.path());
    let files = [("world.gpkg", std::fs::read(&gpkg).expect("world.gpkg"))];
    let (status, dataset) =
        call(&state, multipart("/datasets/upload", &files, Some("world"))).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    (dir, state, gpkg)
}
