//! Hostile uploads: file names that climb out of the upload folder, zip archives whose entries
//! do (or are symbolic links), archive bombs (too many entries, too much declared data, an
//! absurd compression ratio), bytes that contradict their file's extension, GDAL descriptions
//! of other files and URLs (VRT, WFS; also inside archives), and uploads past the size, file
//! count and field limits. Each is refused with a clear 4xx and leaves nothing
//! stored — no dataset, no folder — while a file without an extension is read as what its
//! bytes are.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;
use common::uploads::try_upload as upload;

use std::io::Write;
use std::path::Path;

use axum::http::StatusCode;
use common::{call, get, multipart, shared};
use geomill::config::Config;
use geomill::state::AppState;
use serde_json::Value;
use zip::write::SimpleFileOptions;

const POINTS: &[u8] = br#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#;

fn app_state(dir: &Path, max_upload_mb: u64) -> AppState {
    let mut config = Config::with_data_dir(dir);
    config.max_upload_mb = max_upload_mb;
    AppState::open(config).unwrap()
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

/// Nothing stored: no dataset, no upload folder.
async fn assert_nothing_stored(state: &AppState, dir: &Path, case: &str) {
    let (_, page) = call(state, get("/datasets")).await;
    assert_eq!(page["total"], 0, "{case}: {page}");
    let folders = std::fs::read_dir(dir.join("uploads")).map_or(0, Iterator::count);
    assert_eq!(folders, 0, "{case}: a refused upload left a folder");
}

/// A zip archive of `entries` (name, bytes), deflated.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// The Shapefile parts of Natural Earth's cities, to put in archives.
fn city_parts() -> Vec<(String, Vec<u8>)> {
    ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            let name = format!("naturalearth_cities.{ext}");
            let bytes = std::fs::read(shared(&format!("naturalearth_cities/{name}"))).unwrap();
            (name, bytes)
        })
        .collect()
}

#[tokio::test]
async fn file_names_are_reduced_to_their_base_name_inside_the_upload_folder() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("a/b/data");
    let state = app_state(&data, 64);
    for (sent, kept) in [
        ("../../evil1.geojson", "evil1.geojson"),
        ("..\\..\\evil2.geojson", "evil2.geojson"),
        ("/tmp/evil3.geojson", "evil3.geojson"),
        ("C:\\Windows\\evil4.geojson", "evil4.geojson"),
        ("sub/../../evil5.geojson", "evil5.geojson"),
    ] {
        let (status, dataset) = upload(&state, &[(sent, POINTS.to_vec())]).await;
        assert_eq!(status, StatusCode::CREATED, "{sent}: {dataset}");
        assert_eq!(dataset["name"], kept, "{sent}");
        let id = dataset["id"].as_str().unwrap();
        assert!(data.join("uploads").join(id).join(kept).is_file(), "{sent}");
    }
    // Nothing was written above the data directory.
    for folder in [
        root.path(),
        &root.path().join("a"),
        &root.path().join("a/b"),
    ] {
        let names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with("evil")), "{names:?}");
    }
    assert!(!Path::new("/tmp/evil3.geojson").exists());

    let empty_dir = tempfile::tempdir().unwrap();
    let strict = app_state(empty_dir.path(), 64);
    let long = format!("{}.geojson", "x".repeat(300));
    for name in ["..", "a/", "tab\tname.geojson", long.as_str(), ""] {
        let (status, body) = upload(&strict, &[(name, POINTS.to_vec())]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name:?}: {body}");
        assert!(message(&body).contains("no usable file name"), "{body}");
    }
    assert_nothing_stored(&strict, empty_dir.path(), "bad names").await;
}

#[tokio::test]
async fn archive_entries_that_leave_the_archive_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), 64);
    let parts = city_parts();
    for evil in [
        "../naturalearth_cities.shp",
        "/etc/naturalearth_cities.shp",
        "..\\naturalearth_cities.shp",
        "data/../../naturalearth_cities.shp",
        "C:\\naturalearth_cities.shp",
    ] {
        let mut entries: Vec<(&str, &[u8])> = parts
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        entries[0].0 = evil;
        let (status, body) = upload(&state, &[("cities.zip", zip_of(&entries))]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{evil}: {body}");
        assert_eq!(body["error"]["code"], "unsafe_archive", "{evil}: {body}");
        assert!(
            message(&body).contains(&format!("{evil:?}")),
            "{evil}: {body}"
        );
        assert_nothing_stored(&state, dir.path(), evil).await;
    }
    // A symbolic link entry.
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    writer
        .add_symlink(
            "naturalearth_cities.dbf",
            "/etc/passwd",
            SimpleFileOptions::default(),
        )
        .unwrap();
    for (name, bytes) in parts.iter().filter(|(n, _)| !n.ends_with(".dbf")) {
        writer
            .start_file(name.as_str(), SimpleFileOptions::default())
            .unwrap();
        writer.write_all(bytes).unwrap();
    }
    let archive = writer.finish().unwrap().into_inner();
    let (status, body) = upload(&state, &[("cities.zip", archive)]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(message(&body).contains("symbolic link"), "{body}");
    assert_nothing_stored(&state, dir.path(), "symlink").await;

    // The same archive with plain names loads.
    let entries: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let (status, dataset) = upload(&state, &[("cities.zip", zip_of(&entries))]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["layers"][0]["feature_count"], 243);
}

#[tokio::test]
async fn archive_bombs_are_refused_from_their_central_directory() {
    let dir = tempfile::tempdir().unwrap();
    // 2 MiB uploads: archives may declare up to 40 MiB.
    let state = app_state(dir.path(), 2);
    let names: Vec<String> = (0..10_001).map(|i| format!("{i}")).collect();
    let many: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    let zeros = vec![0_u8; 8 << 20];
    let one_mib = vec![0_u8; 1 << 20];
    let wide: Vec<String> = (0..50).map(|i| format!("part{i}.dbf")).collect();
    let wide: Vec<(&str, &[u8])> = wide
        .iter()
        .map(|n| (n.as_str(), one_mib.as_slice()))
        .collect();
    for (case, archive, words) in [
        ("10,001 entries", zip_of(&many), "more than 10000"),
        (
            "8 MiB of zeros in one entry",
            zip_of(&[("zeros.shp", &zeros)]),
            "expands",
        ),
        (
            "50 MiB declared in all",
            zip_of(&wide),
            "20 times the upload limit",
        ),
    ] {
        assert!(archive.len() < 2 << 20, "{case}: {} bytes", archive.len());
        let (status, body) = upload(&state, &[("bomb.zip", archive)]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{case}: {body}");
        assert_eq!(body["error"]["code"], "unsafe_archive", "{case}: {body}");
        assert!(message(&body).contains(words), "{case}: {body}");
        assert_nothing_stored(&state, dir.path(), case).await;
    }
}

#[tokio::test]
async fn bytes_that_contradict_the_extension_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), 64);
    let zip = std::fs::read(shared("nybb_16a.zip")).unwrap();
    let sqlite = b"SQLite format 3\0garbage".to_vec();
    for (name, bytes, promised, found) in [
        ("roads.gpkg", zip.clone(), "GeoPackage", "a zip archive"),
        ("roads.zip", POINTS.to_vec(), "a zip archive", "JSON text"),
        (
            "roads.geojson",
            sqlite.clone(),
            "GeoJSON",
            "an SQLite database",
        ),
        ("roads.shp", b"hello".to_vec(), "Shapefile", "plain text"),
        (
            "roads.parquet",
            b"a,b\n1,2\n".to_vec(),
            "Parquet",
            "plain text",
        ),
        ("roads.csv", zip.clone(), "text", "a zip archive"),
        ("roads.fgb", POINTS.to_vec(), "FlatGeobuf", "JSON text"),
        ("roads.kml", POINTS.to_vec(), "XML", "JSON text"),
    ] {
        let (status, body) = upload(&state, &[(name, bytes)]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{name}: {body}");
        assert_eq!(body["error"]["code"], "format_mismatch", "{name}: {body}");
        let text = message(&body);
        assert!(
            text.contains(name) && text.contains(promised) && text.contains(found),
            "{name}: {text}"
        );
        assert_nothing_stored(&state, dir.path(), name).await;
    }
    // Without an extension, the bytes decide: a zipped Shapefile, GeoJSON.
    let (status, dataset) = upload(&state, &[("nybb", zip)]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(
        (
            dataset["format"].clone(),
            dataset["layers"][0]["feature_count"].clone()
        ),
        (Value::from("SHP"), Value::from(5))
    );
    let (status, dataset) = upload(&state, &[("points", POINTS.to_vec())]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["layers"][0]["feature_count"], 1);
}

#[tokio::test]
async fn uploads_past_the_size_file_and_field_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(dir.path(), 1);
    let (status, body) = upload(&state, &[("big.geojson", vec![b' '; 2 << 20])]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(message(&body).contains("GEOMILL_MAX_UPLOAD_MB"), "{body}");
    // The limit covers all files of one upload together.
    let half = vec![b' '; 600 << 10];
    let (status, body) = upload(&state, &[("a.shp", half.clone()), ("a.dbf", half)]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_nothing_stored(&state, dir.path(), "size").await;

    let names: Vec<String> = (0..33).map(|i| format!("part{i}.prj")).collect();
    let files: Vec<(&str, Vec<u8>)> = names.iter().map(|n| (n.as_str(), b"x".to_vec())).collect();
    let (status, body) = upload(&state, &files).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(message(&body).contains("at most 32 files"), "{body}");
    assert_nothing_stored(&state, dir.path(), "files").await;

    let long_name = "n".repeat(2000);
    let request = multipart(
        "/datasets/upload",
        &[("p.geojson", POINTS.to_vec())],
        Some(&long_name),
    );
    let (status, body) = call(&state, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(message(&body).contains("longer than 1024 bytes"), "{body}");
    assert_nothing_stored(&state, dir.path(), "name").await;
}

/// Counts the requests a local server receives (standing for an internal service).
async fn counting_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = axum::Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { POINTS }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, hits)
}

#[tokio::test]
async fn gdal_descriptions_of_other_sources_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = app_state(&dir.path().join("data"), 64);
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "name,lon,lat\nsecret,1,2\n").unwrap();
    let (port, hits) = counting_server().await;
    let local = format!(
        "<?xml version=\"1.0\"?>\n<OGRVRTDataSource><OGRVRTLayer name=\"leak\"><SrcDataSource>{}</SrcDataSource><GeometryType>wkbPoint</GeometryType><GeometryField encoding=\"PointFromColumns\" x=\"lon\" y=\"lat\"/></OGRVRTLayer></OGRVRTDataSource>",
        secret.display()
    );
    let remote = format!(
        "<OGRVRTDataSource><OGRVRTLayer name=\"leak\"><SrcDataSource>/vsicurl/http://127.0.0.1:{port}/x.geojson</SrcDataSource></OGRVRTLayer></OGRVRTDataSource>"
    );
    let wfs =
        format!("<OGRWFSDataSource><URL>http://127.0.0.1:{port}/wfs</URL></OGRWFSDataSource>");
    let zipped = zip_of(&[("data.vrt", remote.as_bytes())]);
    for (name, bytes, words) in [
        ("evil.vrt", local.clone().into_bytes(), "OGRVRTDataSource"),
        ("evil.xml", local.clone().into_bytes(), "OGRVRTDataSource"),
        ("evil", local.into_bytes(), "OGRVRTDataSource"),
        (
            "remote.vrt",
            remote.clone().into_bytes(),
            "OGRVRTDataSource",
        ),
        ("remote.kml", remote.into_bytes(), "OGRVRTDataSource"),
        ("service.xml", wfs.into_bytes(), "OGRWFSDataSource"),
        ("data.zip", zipped, "entry \"data.vrt\" of data.zip"),
    ] {
        let (status, body) = upload(&state, &[(name, bytes)]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{name}: {body}");
        assert_eq!(body["error"]["code"], "unsafe_file", "{name}: {body}");
        assert!(message(&body).contains(words), "{name}: {body}");
        assert_nothing_stored(&state, &dir.path().join("data"), name).await;
    }
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "GDAL reached the server"
    );
}
