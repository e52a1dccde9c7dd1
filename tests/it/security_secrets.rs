//! Secrets, caching and binding on the real server, as an attacker meets them: webhook secrets
//! that answers must not show but firings must still sign with; tiles fetched with a key kept
//! out of shared caches; and an API without keys that must not listen beyond loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::roles::{Caller, keyed_server, request};
use crate::common::{Server, multipart_body, world_gpkg};

/// Uploads the world GeoPackage as the editor; answers the dataset id.
async fn upload_world(client: &reqwest::Client, server: &Server) -> String {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(world_gpkg(dir.path())).unwrap();
    let (content_type, body) = multipart_body(&[("world.gpkg", bytes)], None);
    let response = request(
        client,
        server,
        Method::POST,
        "/datasets/upload",
        Caller::Editor,
    )
    .header("content-type", content_type)
    .body(body)
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let dataset: Value = response.json().await.unwrap();
    dataset["id"].as_str().unwrap().to_owned()
}

const WEBHOOK_SECRET: &str = "the-webhook-signing-secret-42";

/// A webhook receiver on loopback answering 200; hands over each request's signature and body.
async fn webhook_receiver() -> (
    u16,
    tokio::sync::mpsc::UnboundedReceiver<(Option<String>, Vec<u8>)>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut data = Vec::new();
            let mut buffer = [0u8; 4096];
            let (head, body) = loop {
                let n = socket.read(&mut buffer).await.unwrap();
                assert!(n > 0, "connection closed early");
                data.extend_from_slice(&buffer[..n]);
                if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&data[..end]).to_string();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    while data.len() < end + 4 + length {
                        let n = socket.read(&mut buffer).await.unwrap();
                        assert!(n > 0, "connection closed early");
                        data.extend_from_slice(&buffer[..n]);
                    }
                    break (head, data[end + 4..end + 4 + length].to_vec());
                }
            };
            socket
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            let signature = head.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("x-geomill-signature")
                    .then(|| value.trim().to_owned())
            });
            if sender.send((signature, body)).is_err() {
                break;
            }
        }
    });
    (port, receiver)
}

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    ring::hmac::sign(&key, body)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Status and body text of a call.
async fn text(builder: reqwest::RequestBuilder) -> (StatusCode, String) {
    let response = builder.send().await.unwrap();
    (response.status(), response.text().await.unwrap())
}

/// An editor's PUT of `trigger` as trigger `id`.
async fn put_trigger(
    client: &reqwest::Client,
    server: &Server,
    id: &str,
    trigger: &Value,
) -> (StatusCode, String) {
    let path = format!("/triggers/{id}");
    text(request(client, server, Method::PUT, &path, Caller::Editor).json(trigger)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_secrets_are_never_shown_and_still_sign() {
    let (hook_port, mut hooks) = webhook_receiver().await;
    let allowed = format!("127.0.0.1:{hook_port}");
    let server = keyed_server(&[("GEOMILL_ALLOWED_URL_HOSTS", allowed.as_str())]);
    let client = reqwest::Client::new();
    let dataset = upload_world(&client, &server).await;
    let (status, tracked) = text(
        request(
            &client,
            &server,
            Method::POST,
            &format!("/datasets/{dataset}/enable_tracking"),
            Caller::Editor,
        )
        .json(&json!({"layer": "countries"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{tracked}");
    let trigger = json!({"name": "countries changed", "event": "DATA_CHANGED",
        "dataset_id": dataset, "layer": "countries", "predicates": [],
        "actions": [{"action_type": "NOTIFY", "config": {"message": "changed",
            "webhook": format!("http://127.0.0.1:{hook_port}/hook"), "secret": WEBHOOK_SECRET}}]});

    // Written: the answer already hides it.
    let (status, created) =
        text(request(&client, &server, Method::POST, "/triggers", Caller::Editor).json(&trigger))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert!(!created.contains(WEBHOOK_SECRET), "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["actions"][0]["config"]["secret"], "***");

    // Read back by a viewer, in the list and alone: `***`.
    for path in ["/triggers".to_owned(), format!("/triggers/{id}")] {
        let (status, body) = text(request(
            &client,
            &server,
            Method::GET,
            &path,
            Caller::Viewer,
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert!(!body.contains(WEBHOOK_SECRET), "{path}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        let shown = if path == "/triggers" {
            answer["triggers"][0].clone()
        } else {
            answer
        };
        assert_eq!(shown["actions"][0]["config"]["secret"], "***", "{path}");
    }
    let (status, body) = text(
        request(
            &client,
            &server,
            Method::POST,
            "/triggers/validate",
            Caller::Viewer,
        )
        .json(&trigger),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body.contains(WEBHOOK_SECRET), "{body}");

    // The read answer sent back (`***`), then a body without the secret: the stored one stays.
    let (status, read) = text(request(
        &client,
        &server,
        Method::GET,
        &format!("/triggers/{id}"),
        Caller::Editor,
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    let mut edited: Value = serde_json::from_str(&read).unwrap();
    // `table` is derived from dataset_id and layer; a body gives one or the other.
    edited.as_object_mut().unwrap().remove("table");
    edited["actions"][0]["config"]["message"] = json!("changed again");
    let (status, body) = put_trigger(&client, &server, &id, &edited).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    edited["actions"][0]["config"]
        .as_object_mut()
        .unwrap()
        .remove("secret");
    let (status, body) = put_trigger(&client, &server, &id, &edited).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A new trigger cannot claim a stored secret it does not have.
    let mut masked = trigger.clone();
    masked["actions"][0]["config"]["secret"] = json!("***");
    let (status, body) =
        text(request(&client, &server, Method::POST, "/triggers", Caller::Editor).json(&masked))
            .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("actions[0].config.secret"), "{body}");

    // Deleting the dataset deletes the tracked rows: the webhook is signed with the real secret.
    let (status, body) = text(request(
        &client,
        &server,
        Method::DELETE,
        &format!("/api/portal/datasets/{dataset}"),
        Caller::Editor,
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (signature, body) = tokio::time::timeout(Duration::from_secs(60), hooks.recv())
        .await
        .expect("the webhook within 60 s")
        .expect("a delivery");
    assert_eq!(
        signature,
        Some(format!("sha256={}", hmac_hex(WEBHOOK_SECRET, &body)))
    );
    let event: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(event["data"]["trigger_id"], json!(id));
    assert_eq!(event["data"]["message"], "changed again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tile_fetched_with_a_key_is_private() {
    let server = keyed_server(&[]);
    let client = reqwest::Client::new();
    let dataset = upload_world(&client, &server).await;
    let path = format!("/ogc/collections/{dataset}.countries/tiles/0/0/0.mvt");
    let response = request(&client, &server, Method::GET, &path, Caller::Viewer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let cache = response.headers()["cache-control"].to_str().unwrap();
    assert!(
        cache.starts_with("private") && !cache.contains("public"),
        "{cache}"
    );
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let unchanged = request(&client, &server, Method::GET, &path, Caller::Viewer)
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
    let cache = unchanged.headers()["cache-control"].to_str().unwrap();
    assert!(cache.starts_with("private"), "{cache}");
    // A JSON answer that needed a key, too; the open health check stays as it was.
    let response = request(&client, &server, Method::GET, "/datasets", Caller::Viewer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["cache-control"], "private");
    let response = client.get(server.url("/health")).send().await.unwrap();
    assert!(response.headers().get("cache-control").is_none());
}

/// The binary started with `env` (no key, no GEOMILL_BIND unless given), its log lines sent
/// over a channel.
fn spawn_without_keys(env: &[(&str, &str)]) -> (Child, mpsc::Receiver<String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_geomill"));
    command
        .arg("serve")
        .env_remove("GEOMILL_BIND")
        .env_remove("GEOMILL_ALLOW_OPEN")
        .env_remove("GEOMILL_API_KEYS")
        .env_remove("GEOMILL_API_KEY")
        .env_remove("GEOMILL_OIDC_ISSUER")
        .env_remove("GEOMILL_POSTGIS_DSN")
        .env("GEOMILL_PORT", "0")
        .env("GEOMILL_DATA_DIR", dir.path())
        .env("GEOMILL_LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    (child, lines, dir)
}

/// The address the server reports listening on, and every log line before it.
fn listening(lines: &mpsc::Receiver<String>) -> (String, Vec<String>) {
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no listening line within 60 s: {seen:?}"));
        if let Ok(json) = serde_json::from_str::<Value>(&line)
            && json["fields"]["message"] == "geomill listening"
        {
            return (json["fields"]["address"].as_str().unwrap().to_owned(), seen);
        }
        seen.push(line);
    }
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn without_keys_the_server_listens_on_loopback_only() {
    let (child, lines, _dir) = spawn_without_keys(&[]);
    let (address, before) = listening(&lines);
    stop(child);
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    assert!(
        before.iter().any(|l| l.contains("loopback")),
        "the log says why: {before:?}"
    );

    // Every interface without keys: refused at start, naming the way to ask for it.
    let (mut child, lines, _dir) = spawn_without_keys(&[("GEOMILL_BIND", "0.0.0.0")]);
    let mut status = None;
    for _ in 0..600 {
        status = child.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let Some(status) = status else {
        stop(child);
        panic!("geomill served 0.0.0.0 without keys");
    };
    assert_eq!(status.code(), Some(2));
    let log: Vec<String> = lines.iter().collect();
    assert!(
        log.iter().any(|l| l.contains("GEOMILL_ALLOW_OPEN")),
        "{log:?}"
    );

    // Asked for on purpose: served.
    let (child, lines, _dir) =
        spawn_without_keys(&[("GEOMILL_BIND", "0.0.0.0"), ("GEOMILL_ALLOW_OPEN", "1")]);
    let (address, _) = listening(&lines);
    stop(child);
    assert!(address.starts_with("0.0.0.0:"), "{address}");
}
