//! A running server (the real binary) with the Natural Earth world uploaded, for the tests that
//! read it as clients do (GDAL's OGC API Features and MVT drivers, plain HTTP).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support code

use reqwest::StatusCode;
use serde_json::Value;

use super::{Server, world_gpkg};

/// A running server with the Natural Earth world uploaded (countries and cities).
pub struct World {
    pub server: Server,
    pub client: reqwest::Client,
    pub gpkg: String,
    pub dataset_id: String,
    _scratch: tempfile::TempDir,
}

pub async fn world() -> World {
    let server = Server::start(&[]);
    let client = reqwest::Client::new();
    let scratch = tempfile::tempdir().unwrap();
    let gpkg = world_gpkg(scratch.path());
    let dataset = server
        .upload(std::path::Path::new(&gpkg), "world.gpkg")
        .await;
    let dataset_id = dataset["id"].as_str().unwrap().to_owned();
    World {
        server,
        client,
        gpkg,
        dataset_id,
        _scratch: scratch,
    }
}

impl World {
    pub async fn get(&self, path: &str) -> (StatusCode, String, Value) {
        let response = self.client.get(self.server.url(path)).send().await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = response.json().await.unwrap_or(Value::Null);
        (status, content_type, body)
    }

    pub fn collection(&self, layer: &str) -> String {
        format!("{}.{layer}", self.dataset_id)
    }

    pub fn oapif(&self) -> String {
        format!("OAPIF:{}", self.server.url("/ogc"))
    }
}

pub fn feature_count(ogrinfo: &str) -> i64 {
    ogrinfo
        .lines()
        .find_map(|l| l.strip_prefix("Feature Count: "))
        .unwrap_or_else(|| panic!("no feature count in {ogrinfo}"))
        .trim()
        .parse()
        .unwrap()
}
