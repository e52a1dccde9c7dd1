//! The app served from the test's own process on a loopback port (so a test can reach its
//! state directly), and WebSocket clients of its event stream.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::StreamExt;
use geomill::state::AppState;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

pub type Client =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Serves `state` on 127.0.0.1 with peer addresses, as `geomill serve` does.
pub async fn serve(state: &AppState) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let app = geomill::api::app(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    address
}

/// A client of `/ws/events` with `query` (`""` or `?topics=...`).
pub async fn connect(address: SocketAddr, query: &str) -> Client {
    let url = format!("ws://{address}/ws/events{query}");
    tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket")
        .0
}

/// The next event a client receives (pings skipped), within `wait`.
pub async fn next_event(client: &mut Client, wait: Duration) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let message = tokio::time::timeout_at(deadline, client.next())
            .await
            .ok()??
            .ok()?;
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).ok();
        }
    }
}

/// Uploads the `world` GeoPackage (countries, cities) to the server at `address`; answers the
/// dataset.
pub async fn upload_world(address: SocketAddr, dir: &std::path::Path) -> Value {
    let gpkg = super::world_gpkg(dir);
    let files = [("world.gpkg", std::fs::read(&gpkg).expect("world.gpkg"))];
    let (content_type, body) = super::multipart_body(&files, Some("world"));
    let response = reqwest::Client::new()
        .post(format!("http://{address}/datasets/upload"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("upload");
    assert_eq!(response.status(), 201, "upload of world.gpkg");
    response.json().await.expect("dataset")
}

/// Status and JSON body (Null when not JSON) of one request, with an optional JSON body.
pub async fn send(method: reqwest::Method, url: String, body: Option<Value>) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Asserts a 422 whose error message contains `expected` (`context` names the request).
pub fn assert_unprocessable(status: u16, answer: &Value, expected: &str, context: &Value) {
    assert_eq!(status, 422, "{context}: {answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(expected), "{context}: {answer}");
}
