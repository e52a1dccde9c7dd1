//! Files open only through an allow-list of GDAL drivers: a GDAL description of other sources
//! (an `<OGRVRTDataSource>` naming `CSV:<a server file>` or a `/vsicurl/` loopback URL) is
//! refused whatever its name (`.vrt`, `.gpkg`, `.geojson`, `.csv`), with or without NUL bytes
//! after it (GDAL's XML parser stops at the first NUL, so padding made it look binary), loose,
//! inside a zip archive, fetched by `import-url`, or put among the example files. Nested
//! archives are refused. Every refusal is a 4xx that leaves nothing stored; the server file's
//! marker never appears in an answer, and the loopback service never hears from GDAL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::{Path, State};
use common::{Server, multipart_body};
use serde_json::{Value, json};
use zip::write::SimpleFileOptions;

const POINTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#;

/// A loopback HTTP service: `/files/<name>` answers the files `import-url` is given; any other
/// path is the bait a `/vsicurl/` reference points at, counted.
struct Loopback {
    port: u16,
    bait_hits: Arc<AtomicUsize>,
}

#[derive(Clone)]
struct Served {
    files: Arc<HashMap<String, Vec<u8>>>,
    bait_hits: Arc<AtomicUsize>,
}

async fn serve_file(State(served): State<Served>, Path(name): Path<String>) -> Vec<u8> {
    served.files.get(&name).cloned().unwrap_or_default()
}

impl Loopback {
    async fn start(files: HashMap<String, Vec<u8>>) -> Self {
        let bait_hits = Arc::new(AtomicUsize::new(0));
        let served = Served {
            files: Arc::new(files),
            bait_hits: bait_hits.clone(),
        };
        let app = axum::Router::new()
            .route("/files/{name}", axum::routing::get(serve_file))
            .fallback(|State(served): State<Served>| async move {
                served.bait_hits.fetch_add(1, Ordering::SeqCst);
                POINTS
            })
            .with_state(served);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { port, bait_hits }
    }

    fn hits(&self) -> usize {
        self.bait_hits.load(Ordering::SeqCst)
    }
}

/// A server file an attacker wants to read, holding a marker that must never come back.
struct Secret {
    _dir: tempfile::TempDir,
    path: String,
    marker: String,
}

fn secret() -> Secret {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("MARKER{}", uuid::Uuid::new_v4().simple());
    let path = dir.path().join("secret.csv");
    std::fs::write(&path, format!("name,lon,lat\n{marker},1,2\n")).unwrap();
    Secret {
        path: path.display().to_string(),
        marker,
        _dir: dir,
    }
}

/// A VRT reading the secret file through GDAL's CSV driver prefix, as points.
fn vrt_reading_a_server_file(secret: &Secret) -> Vec<u8> {
    format!(
        "<OGRVRTDataSource><OGRVRTLayer name=\"leak\"><SrcDataSource>CSV:{}</SrcDataSource><SrcLayer>secret</SrcLayer><GeometryType>wkbPoint</GeometryType><GeometryField encoding=\"PointFromColumns\" x=\"lon\" y=\"lat\"/></OGRVRTLayer></OGRVRTDataSource>",
        secret.path
    )
    .into_bytes()
}

/// A VRT reading a loopback URL (an internal service) through `/vsicurl/`.
fn vrt_reaching_a_loopback_url(port: u16) -> Vec<u8> {
    format!(
        "<OGRVRTDataSource><OGRVRTLayer name=\"leak\"><SrcDataSource>/vsicurl/http://127.0.0.1:{port}/bait/points.geojson</SrcDataSource></OGRVRTLayer></OGRVRTDataSource>"
    )
    .into_bytes()
}

/// `bytes` followed by NUL bytes past the 8 KiB a file is sniffed by.
fn padded(bytes: &[u8]) -> Vec<u8> {
    let mut padded = bytes.to_vec();
    padded.extend_from_slice(&[0; 9000]);
    padded
}

/// Every hostile document: (file name, bytes), each VRT named `.vrt`, `.gpkg` and `.geojson`,
/// plain and padded with NUL bytes.
fn hostile_documents(secret: &Secret, port: u16) -> Vec<(String, Vec<u8>)> {
    let mut documents = Vec::new();
    for (what, vrt) in [
        ("file", vrt_reading_a_server_file(secret)),
        ("url", vrt_reaching_a_loopback_url(port)),
    ] {
        for extension in ["vrt", "gpkg", "geojson"] {
            documents.push((format!("{what}_plain.{extension}"), vrt.clone()));
            documents.push((format!("{what}_padded.{extension}"), padded(&vrt)));
        }
    }
    documents
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

fn start_server(extra: &[(&str, &str)]) -> Server {
    let mut env = vec![("GEOMILL_ALLOW_PRIVATE_URLS", "true")];
    env.extend_from_slice(extra);
    Server::start(&env)
}

async fn upload(server: &Server, name: &str, bytes: Vec<u8>) -> (u16, String) {
    let (content_type, body) = multipart_body(&[(name, bytes)], None);
    let response = reqwest::Client::new()
        .post(server.url("/datasets/upload"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn import_url(server: &Server, url: &str) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(server.url("/datasets/import-url"))
        .json(&json!({ "url": url }))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn get_text(server: &Server, path: &str) -> String {
    reqwest::get(server.url(path))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A refusal: a 4xx whose answer does not quote the secret.
fn assert_refused(case: &str, (status, body): &(u16, String), secret: &Secret) {
    assert!((400..500).contains(status), "{case}: {status} {body}");
    assert!(
        !body.contains(&secret.marker),
        "{case}: the answer leaks the secret: {body}"
    );
}

/// Nothing stored: no dataset, no upload folder, no marker in the listing; and the loopback
/// service never reached.
async fn assert_nothing_stored(server: &Server, secret: &Secret, loopback: &Loopback) {
    let listing = get_text(server, "/datasets").await;
    let page: Value = serde_json::from_str(&listing).unwrap();
    assert_eq!(page["total"], 0, "{listing}");
    assert!(!listing.contains(&secret.marker), "{listing}");
    let uploads = server.data_dir.path().join("uploads");
    let folders = std::fs::read_dir(&uploads).map_or(0, Iterator::count);
    assert_eq!(
        folders,
        0,
        "a refused file left a folder in {}",
        uploads.display()
    );
    assert_eq!(loopback.hits(), 0, "GDAL reached the loopback service");
}

#[tokio::test]
async fn loose_vrt_documents_are_refused_whatever_their_name_or_padding() {
    let secret = secret();
    let loopback = Loopback::start(HashMap::new()).await;
    let server = start_server(&[]);
    for (name, bytes) in hostile_documents(&secret, loopback.port) {
        let answer = upload(&server, &name, bytes).await;
        assert_refused(&name, &answer, &secret);
    }
    assert_nothing_stored(&server, &secret, &loopback).await;
}

#[tokio::test]
async fn vrt_documents_inside_zip_archives_are_refused() {
    let secret = secret();
    let loopback = Loopback::start(HashMap::new()).await;
    let server = start_server(&[]);
    for (name, bytes) in hostile_documents(&secret, loopback.port) {
        let archive = zip_of(&[(name.as_str(), &bytes)]);
        let answer = upload(&server, &format!("{name}.zip"), archive).await;
        assert_refused(&format!("{name} zipped"), &answer, &secret);
    }
    assert_nothing_stored(&server, &secret, &loopback).await;
}

#[tokio::test]
async fn vrt_documents_fetched_by_import_url_are_refused() {
    let secret = secret();
    // The served files name the loopback port, known only once it listens: serve them from a
    // second service that the first one's port is written into.
    let bait = Loopback::start(HashMap::new()).await;
    let documents = hostile_documents(&secret, bait.port);
    let files: HashMap<String, Vec<u8>> = documents.iter().cloned().collect();
    let host = Loopback::start(files).await;
    let server = start_server(&[]);
    for (name, _) in &documents {
        let url = format!("http://127.0.0.1:{}/files/{name}", host.port);
        let answer = import_url(&server, &url).await;
        assert_refused(name, &answer, &secret);
        // The URL guard let the loopback address through: the refusal is the file's.
        assert!(
            !answer.1.contains("url_not_allowed"),
            "{name}: {}",
            answer.1
        );
    }
    assert_nothing_stored(&server, &secret, &bait).await;
    assert_eq!(host.hits(), 0, "only /files/ was asked for");
}

#[tokio::test]
async fn archives_inside_archives_are_refused_not_opened() {
    let secret = secret();
    let loopback = Loopback::start(HashMap::new()).await;
    let server = start_server(&[]);
    let vrt = padded(&vrt_reaching_a_loopback_url(loopback.port));
    let inner = zip_of(&[("points.gpkg", &vrt)]);
    let points = zip_of(&[("points.geojson", POINTS.as_bytes())]);
    for (name, archive) in [
        ("vrt.zip", zip_of(&[("inner.zip", &inner)])),
        ("points.zip", zip_of(&[("inner.zip", &points)])),
        ("renamed.zip", zip_of(&[("inner.dat", &points)])),
    ] {
        let answer = upload(&server, name, archive).await;
        assert_refused(name, &answer, &secret);
        assert_eq!(answer.0, 422, "{name}: {}", answer.1);
        assert!(
            answer.1.contains("unsafe_archive") && answer.1.contains("archive inside the archive"),
            "{name}: {}",
            answer.1
        );
    }
    assert_nothing_stored(&server, &secret, &loopback).await;
}

#[tokio::test]
async fn example_files_open_through_the_allow_list_too() {
    let secret = secret();
    let loopback = Loopback::start(HashMap::new()).await;
    let examples = tempfile::tempdir().unwrap();
    let write =
        |name: &str, bytes: &[u8]| std::fs::write(examples.path().join(name), bytes).unwrap();
    // Example files are loaded without the upload checks: only the allow-list stands between
    // these and GDAL's VRT driver.
    write("good.geojson", POINTS.as_bytes());
    write("leak.geojson", &vrt_reading_a_server_file(&secret));
    write("reach_csv.csv", &vrt_reaching_a_loopback_url(loopback.port));
    write(
        "reach_kml.kml",
        &padded(&vrt_reaching_a_loopback_url(loopback.port)),
    );
    let folder = examples.path().display().to_string();
    let server = start_server(&[("GEOMILL_EXAMPLES_DIR", &folder)]);
    let listing = get_text(&server, "/examples").await;
    let page: Value = serde_json::from_str(&listing).unwrap();
    let ids: Vec<&str> = page["examples"]
        .as_array()
        .unwrap_or_else(|| panic!("{listing}"))
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["good"], "{listing}");
    let preview = get_text(&server, "/examples/good/preview").await;
    assert!(preview.contains("\"a\""), "{preview}");
    for id in ["leak", "reach_csv", "reach_kml"] {
        let answer = get_text(&server, &format!("/examples/{id}/preview")).await;
        assert!(!answer.contains(&secret.marker), "{id}: {answer}");
    }
    assert_eq!(loopback.hits(), 0, "GDAL reached the loopback service");
}
