//! The benchmarks' way in: requests to the in-process app, and uploads as the server's upload
//! form sends them.

use std::path::Path;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use geomill::state::AppState;
use serde_json::Value;
use tower::ServiceExt;

/// Sends one request to the in-process app; answers status and JSON body.
pub async fn call(state: &AppState, request: Request<Body>) -> (StatusCode, Value) {
    let response = geomill::api::app(state.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Uploads `path` as the server's upload form does; answers the dataset.
pub async fn upload(state: &AppState, path: &Path) -> Value {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let boundary = "geomill-bench-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend(std::fs::read(path).unwrap());
    body.extend(format!("\r\n--{boundary}--\r\n").into_bytes());
    let request = Request::post("/datasets/upload")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap();
    let (status, dataset) = call(state, request).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    dataset
}
