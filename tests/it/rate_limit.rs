//! The rate limiter under load: 1,000 requests from concurrent clients against the real
//! server; exactly the configured number pass in the window, every other one is a 429 with
//! `Retry-After` and `RateLimit-*` headers. Once with counters in memory, once in a real Redis
//! shared by two servers (the limit holds across both).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::Server;
use reqwest::StatusCode;

const LIMIT: usize = 100;
const REQUESTS: usize = 1_000;
const CONCURRENCY: usize = 50;

/// A throw-away Redis on a free loopback port, stopped when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Self {
        let port = common::free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "redis-server (Debian package redis-server; scripts/setup.sh test installs it)",
            );
        // Owned from here: dropped (killed and waited for) whatever happens next.
        let redis = Self { child, port };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return redis;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not listen on {port}");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Statuses of `REQUESTS` GETs spread over `urls`, `CONCURRENCY` at a time; the 429s are
/// checked for their headers on the way.
async fn load(urls: Vec<String>, key: Option<&str>) -> (usize, usize) {
    let client = reqwest::Client::new();
    let gate = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut tasks = Vec::new();
    for index in 0..REQUESTS {
        let url = urls[index % urls.len()].clone();
        let mut request = client.get(url);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        let gate = Arc::clone(&gate);
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            let response = request.send().await.unwrap();
            let status = response.status();
            let headers = response.headers();
            assert!(
                headers.contains_key("ratelimit-limit"),
                "{status}: {headers:?}"
            );
            if status == StatusCode::TOO_MANY_REQUESTS {
                let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
                assert!((1..=60).contains(&retry), "{retry}");
                assert_eq!(headers["ratelimit-remaining"], "0");
                let body: serde_json::Value = response.json().await.unwrap();
                assert_eq!(body["error"]["code"], "rate_limited", "{body}");
            }
            status
        }));
    }
    let (mut passed, mut limited) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            StatusCode::OK => passed += 1,
            StatusCode::TOO_MANY_REQUESTS => limited += 1,
            other => panic!("unexpected {other}"),
        }
    }
    (passed, limited)
}

fn limited_server(storage: &str, extra: &[(&str, &str)]) -> Server {
    let limit = LIMIT.to_string();
    let mut env = vec![
        ("GEOMILL_RATE_LIMIT", limit.as_str()),
        ("GEOMILL_RATE_LIMIT_STORAGE", storage),
    ];
    env.extend_from_slice(extra);
    Server::start(&env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_exactly_the_limit_passes() {
    let server = limited_server("memory://", &[]);
    let (passed, limited) = load(vec![server.url("/capabilities")], None).await;
    assert_eq!((passed, limited), (LIMIT, REQUESTS - LIMIT));
    // /health is not counted: probes keep working while callers are limited.
    let health = reqwest::get(server.url("/health")).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_count_apart_from_anonymous_callers() {
    let server = limited_server(
        "memory://",
        &[(
            "GEOMILL_API_KEYS",
            "ana:viewer:ana-key-0001,bo:viewer:bo-key-00001",
        )],
    );
    let (passed, _) = load(vec![server.url("/capabilities")], Some("ana-key-0001")).await;
    assert_eq!(passed, LIMIT);
    // Another key has a window of its own.
    let response = reqwest::Client::new()
        .get(server.url("/capabilities"))
        .header("x-api-key", "bo-key-00001")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["ratelimit-remaining"],
        (LIMIT - 1).to_string().as_str()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_redis_the_limit_holds_across_two_servers() {
    let redis = Redis::start();
    let url = redis.url();
    let first = limited_server(&url, &[]);
    let second = limited_server(&url, &[]);
    let (passed, limited) = load(
        vec![first.url("/capabilities"), second.url("/capabilities")],
        None,
    )
    .await;
    assert_eq!((passed, limited), (LIMIT, REQUESTS - LIMIT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_reads_count_in_a_budget_of_their_own() {
    let reads = (3 * LIMIT).to_string();
    let server = limited_server("memory://", &[("GEOMILL_RATE_LIMIT_READS", reads.as_str())]);
    // The API budget spent first: OGC API reads still pass, up to their own limit.
    let (passed, _) = load(vec![server.url("/capabilities")], None).await;
    assert_eq!(passed, LIMIT);
    let (passed, limited) = load(vec![server.url("/ogc/collections")], None).await;
    assert_eq!((passed, limited), (3 * LIMIT, REQUESTS - 3 * LIMIT));
}
