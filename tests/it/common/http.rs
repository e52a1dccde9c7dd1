//! The real server spoken to over HTTP with JSON, for tests that drive the binary.

use reqwest::StatusCode;
use serde_json::Value;

use super::{Server, multipart_body, world_gpkg};

/// The real server (the binary) and a client for it.
pub struct HttpApi {
    pub server: Server,
    pub client: reqwest::Client,
}

impl HttpApi {
    /// The server with `env` added to its environment.
    pub fn start(env: &[(&str, &str)]) -> Self {
        Self {
            server: Server::start(env),
            client: reqwest::Client::new(),
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.client.request(method, self.server.url(path));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Status and JSON body (Null when not JSON) of a GET.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::DELETE, path, None).await
    }

    /// Status, content type and body text of a GET with an `Accept` header.
    pub async fn get_text(&self, path: &str, accept: &str) -> (StatusCode, String, String) {
        let response = self
            .client
            .get(self.server.url(path))
            .header("accept", accept)
            .send()
            .await
            .expect("request");
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (
            status,
            content_type,
            response.text().await.unwrap_or_default(),
        )
    }

    /// Uploads one file; answers the Dataset (panics unless 201).
    pub async fn upload(&self, name: &str, bytes: Vec<u8>) -> Value {
        self.upload_files(&[(name, bytes)]).await
    }

    /// Uploads `files` together, as one dataset; answers it (201 expected).
    pub async fn upload_files(&self, files: &[(&str, Vec<u8>)]) -> Value {
        let name = files.first().map(|(name, _)| *name).unwrap_or_default();
        let (content_type, body) = multipart_body(files, None);
        let response = self
            .client
            .post(self.server.url("/datasets/upload"))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("upload");
        assert_eq!(response.status(), StatusCode::CREATED, "upload of {name}");
        response.json().await.expect("a Dataset")
    }

    /// Uploads the shared world GeoPackage (`countries`, `cities`); answers the dataset id.
    pub async fn upload_world(&self) -> String {
        let scratch = tempfile::tempdir().expect("tempdir");
        let gpkg = world_gpkg(scratch.path());
        let dataset = self
            .upload("world.gpkg", std::fs::read(&gpkg).expect("world.gpkg"))
            .await;
        dataset["id"].as_str().expect("id").to_owned()
    }
}
