//! Jobs end to end, every test against the real server (the binary) over HTTP: stored rules run
//! as a job (SSE followed to the end, results downloaded and re-read by GDAL), retries,
//! time-outs, cancel, a restart after a kill, 200 jobs through a queue of 4, and bad submissions
//! that create nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use axum::http::StatusCode;
use common::{Server, gdal, get, multipart, post_json, world_gpkg};
use serde_json::{Value, json};

/// `count` points spread over the land-ish band of the globe, the same for the same `seed`.
fn points_csv(count: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1_u64 << 53) as f64
    };
    let mut csv = String::from("id,lon,lat\n");
    for id in 0..count {
        let (lon, lat) = (next() * 340.0 - 170.0, next() * 120.0 - 60.0);
        csv.push_str(&format!("{id},{lon:.5},{lat:.5}\n"));
    }
    csv.into_bytes()
}

/// A nearest-neighbour self-join: quadratic, so 40,000 points keep a job busy for tens of
/// seconds while every chunk of work stays short enough to be interrupted promptly.
fn long_rules() -> Value {
    json!([{"name": "nearest", "capability": "nearest_neighbor", "params": {"ref_layer": "points"}}])
}

/// The real server (the binary), spoken to over HTTP.
struct Api {
    server: Server,
    client: reqwest::Client,
}

impl Api {
    fn start(env: &[(&str, &str)]) -> Self {
        Self::start_in(tempfile::tempdir().unwrap(), env)
    }

    fn start_in(data_dir: tempfile::TempDir, env: &[(&str, &str)]) -> Self {
        Self {
            server: Server::start_in(data_dir, env),
            client: reqwest::Client::new(),
        }
    }

    /// Kills the server (SIGKILL: no chance to clean up) and answers its data directory.
    fn kill(mut self) -> tempfile::TempDir {
        self.server.child.kill().unwrap();
        self.server.child.wait().unwrap();
        std::mem::replace(&mut self.server.data_dir, tempfile::tempdir().unwrap())
    }

    /// The body of a GET as text (an SSE stream read to its end).
    async fn text(&self, path: &str) -> String {
        let response = self.client.get(self.server.url(path)).send().await.unwrap();
        response.text().await.unwrap()
    }

    fn data_dir(&self) -> &std::path::Path {
        self.server.data_dir.path()
    }
}

/// Sends `request` (built like an in-process one) to the server; answers status and JSON body.
async fn call(api: &Api, request: Request<Body>) -> (StatusCode, Value) {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut outgoing = api
        .client
        .request(parts.method, api.server.url(&parts.uri.to_string()));
    for (name, value) in &parts.headers {
        outgoing = outgoing.header(name, value);
    }
    let response = outgoing.body(bytes).send().await.unwrap();
    let status = response.status();
    let bytes = response.bytes().await.unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn upload(state: &Api, name: &str, bytes: Vec<u8>) -> String {
    let (status, dataset) =
        call(state, multipart("/datasets/upload", &[(name, bytes)], None)).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    dataset["id"].as_str().unwrap().to_owned()
}

async fn submit(state: &Api, body: &Value) -> (StatusCode, Value) {
    call(state, post_json("/jobs", body)).await
}

/// Polls the job until `done` holds; panics after two minutes.
async fn wait_until(state: &Api, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (status, job) = call(state, get(&format!("/jobs/{id}"))).await;
        assert_eq!(status, StatusCode::OK, "{job}");
        if done(&job) {
            return job;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "job never got there: {job}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn ended(job: &Value) -> bool {
    matches!(
        job["status"].as_str(),
        Some("COMPLETED" | "FAILED" | "CANCELLED")
    )
}

/// The `data` of every event of a finished SSE body.
fn sse_data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| serde_json::from_str(data.trim()).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_rules_run_as_a_job_over_http_with_live_logs_and_a_result_gdal_reads() {
    let api = Api::start(&[]);
    let scratch = tempfile::tempdir().unwrap();
    let gpkg = world_gpkg(scratch.path());
    let dataset_id = upload(&api, "world.gpkg", std::fs::read(&gpkg).unwrap()).await;
    let mut rule_ids = Vec::new();
    for rule in [
        json!({"name": "populous", "capability": "filter", "config": {"input": "countries", "where": "pop_est > 100000000"}}),
        json!({"name": "halo", "capability": "buffer", "config": {"distance": 10, "unit": "kilometers"}}),
    ] {
        let (status, stored) = call(&api, post_json("/rules", &rule)).await;
        assert_eq!(status, StatusCode::CREATED, "{stored}");
        rule_ids.push(stored["id"].as_str().unwrap().to_owned());
    }

    let (status, job) = submit(
        &api,
        &json!({"name": "halos", "dataset_id": dataset_id, "parameters": {"rule_ids": rule_ids}}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    assert_eq!(job["status"], "PENDING");
    assert!(job["created_at"].as_str().unwrap().ends_with('Z'), "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    let (status, _) = call(&api, get(&format!("/jobs/{id}"))).await;
    assert_eq!(status, StatusCode::OK, "registered before the answer");

    // The log stream ends when the job ends; every line is a JSON object.
    let log = api
        .client
        .get(api.server.url(&format!("/jobs/{id}/stream")))
        .send()
        .await
        .unwrap();
    let content_type = log.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let lines = sse_data(&log.text().await.unwrap());
    assert!(
        lines.iter().all(|l| l["timestamp"].is_string()
            && l["level"].is_string()
            && l["message"].is_string())
    );
    assert!(
        lines
            .iter()
            .any(|l| l["message"].as_str().unwrap().starts_with("completed")),
        "{lines:?}"
    );

    let (_, job) = call(&api, get(&format!("/jobs/{id}"))).await;
    assert_eq!(job["status"], "COMPLETED", "{job}");
    assert_eq!(job["attempts"], 1);
    assert!(job["started_at"].is_string() && job["completed_at"].is_string());
    // Independent count: GDAL's own filter over the same GeoPackage.
    let expected: i64 = gdal(
        "ogrinfo",
        &["-so", "-where", "pop_est > 100000000", &gpkg, "countries"],
    )
    .lines()
    .find_map(|l| l.strip_prefix("Feature Count: "))
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    assert!(expected > 5);
    assert_eq!(job["result"]["features"], expected);

    // Progress events, replayed to a late subscriber, end with the final state.
    let events = sse_data(&api.text(&format!("/jobs/{id}/events")).await);
    let states: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "state")
        .filter_map(|e| e["status"].as_str())
        .collect();
    assert_eq!(states, ["PENDING", "RUNNING", "COMPLETED"]);
    assert!(events.iter().any(|e| e["type"] == "progress"));

    let download = api
        .client
        .get(api.server.url(&format!("/jobs/{id}/download")))
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), StatusCode::OK);
    let file = scratch.path().join("result.gpkg");
    std::fs::write(&file, download.bytes().await.unwrap()).unwrap();
    let (count, crs) = common::ogrinfo_summary(&file.display().to_string(), "result");
    assert_eq!((count, crs.as_deref()), (expected, Some("EPSG:4326")));

    let (_, geojson) = call(&api, get(&format!("/jobs/{id}/download?format=geojson"))).await;
    assert_eq!(
        geojson["features"].as_array().unwrap().len() as i64,
        expected
    );
    let (_, page) = call(&api, get(&format!("/jobs/{id}/features?limit=2&offset=1"))).await;
    assert_eq!(
        (
            page["total"].as_i64(),
            page["features"].as_array().unwrap().len()
        ),
        (Some(expected), 2)
    );
    assert!(
        page["features"][0]["geometry"]["type"]
            .as_str()
            .unwrap()
            .ends_with("Polygon"),
        "{page}"
    );
}

/// An OGC API Features service whose first `failures` item requests answer 503.
async fn flaky_service(failures: usize) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let shapefile = common::shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let features: Value = serde_json::from_str(&gdal(
        "ogr2ogr",
        &["-f", "GeoJSON", "/vsistdout/", &shapefile],
    ))
    .unwrap();
    let counter = calls.clone();
    let app = axum::Router::new()
        .route(
            "/ogc/collections/{id}",
            axum::routing::get(|| async { axum::Json(json!({"id": "countries"})) }),
        )
        .route(
            "/ogc/collections/{id}/items",
            axum::routing::get(move || {
                let (counter, features) = (counter.clone(), features.clone());
                async move {
                    use axum::response::IntoResponse;
                    if counter.fetch_add(1, Ordering::SeqCst) < failures {
                        return (StatusCode::SERVICE_UNAVAILABLE, "maintenance").into_response();
                    }
                    axum::Json(features).into_response()
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}/ogc"), calls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_fails_twice_succeeds_on_its_third_attempt_with_two_retries() {
    let state = Api::start(&[
        ("GEOMILL_ALLOW_PRIVATE_URLS", "true"),
        ("GEOMILL_JOB_RETRY_BACKOFF_MS", "20"),
    ]);
    let mut outcomes = Vec::new();
    for max_retries in [2, 1] {
        let (base, calls) = flaky_service(2).await;
        let (status, dataset) = call(
            &state,
            post_json(
                "/datasets/ogc",
                &json!({"url": base, "service_type": "OAPIF", "layer_name": "countries"}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{dataset}");
        let (status, job) = submit(
            &state,
            &json!({"name": "flaky", "dataset_id": dataset["id"], "max_retries": max_retries,
                "rules": [{"name": "big", "capability": "filter", "params": {"where": "pop_est > 100000000"}}]}),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{job}");
        let job = wait_until(&state, job["id"].as_str().unwrap(), ended).await;
        outcomes.push((job, calls.load(Ordering::SeqCst)));
    }
    let (retried, calls) = &outcomes[0];
    assert_eq!(retried["status"], "COMPLETED", "{retried}");
    assert_eq!((retried["attempts"].as_i64(), *calls), (Some(3), 3));
    assert!(retried["result"]["features"].as_i64().unwrap() > 5);
    let (gave_up, calls) = &outcomes[1];
    assert_eq!(gave_up["status"], "FAILED", "{gave_up}");
    assert_eq!(gave_up["reason"], "failed");
    assert_eq!((gave_up["attempts"].as_i64(), *calls), (Some(2), 2));
    assert!(
        gave_up["error"].as_str().unwrap().contains("503"),
        "{gave_up}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_outs_and_cancels_stop_long_jobs() {
    let state = Api::start(&[]);
    let dataset_id = upload(&state, "points.csv", points_csv(40_000, 7)).await;
    let long = |extra: Value| {
        let mut body = json!({"name": "long", "dataset_id": dataset_id, "rules": long_rules()});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };

    // Past a 1 s time-out: FAILED with reason timeout, long before the work could have ended.
    let (status, job) = submit(&state, &long(json!({"timeout_s": 1}))).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let started = Instant::now();
    let job = wait_until(&state, job["id"].as_str().unwrap(), ended).await;
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("FAILED"), Some("timeout")),
        "{job}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the engine was not stopped"
    );

    // Cancel while running: CANCELLED, no result, and a second cancel answers the same.
    let (_, job) = submit(&state, &long(json!({}))).await;
    let id = job["id"].as_str().unwrap().to_owned();
    wait_until(&state, &id, |j| j["status"] == "RUNNING").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancelled_at = Instant::now();
    let (status, cancelled) =
        call(&state, post_json(&format!("/jobs/{id}/cancel"), &json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "CANCELLED", "{cancelled}");
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(5),
        "cancel did not stop the engine"
    );
    let (status, again) = call(&state, post_json(&format!("/jobs/{id}/cancel"), &json!({}))).await;
    assert_eq!(
        (status, again["status"].as_str()),
        (StatusCode::OK, Some("CANCELLED"))
    );
    let (status, body) = call(&state, get(&format!("/jobs/{id}/download"))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        !state.data_dir().join("results").join(&id).exists(),
        "no partial result is left"
    );

    // A pending job (queued behind a running one) is cancelled at once and never runs.
    let one_at_a_time = Api::start(&[("GEOMILL_MAX_CONCURRENT_JOBS", "1")]);
    let points = upload(&one_at_a_time, "points.csv", points_csv(40_000, 7)).await;
    let body = json!({"dataset_id": points, "rules": long_rules()});
    let (_, first) = submit(&one_at_a_time, &body).await;
    let (_, second) = submit(&one_at_a_time, &body).await;
    let (status, cancelled) = call(
        &one_at_a_time,
        post_json(
            &format!("/jobs/{}/cancel", second["id"].as_str().unwrap()),
            &json!({}),
        ),
    )
    .await;
    assert_eq!(
        (
            status,
            cancelled["status"].as_str(),
            cancelled["attempts"].as_i64()
        ),
        (StatusCode::OK, Some("CANCELLED"), Some(0))
    );
    call(
        &one_at_a_time,
        post_json(
            &format!("/jobs/{}/cancel", first["id"].as_str().unwrap()),
            &json!({}),
        ),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_jobs_through_four_slots_each_run_exactly_once() {
    let state = Api::start(&[("GEOMILL_MAX_CONCURRENT_JOBS", "4")]);
    let dataset_id = upload(&state, "points.csv", points_csv(200, 3)).await;
    let body = json!({"dataset_id": dataset_id, "rules": [{"name": "north", "capability": "filter", "params": {"where": "ST_Y(geom) > 0"}}]});
    let submissions = (0..200).map(|_| submit(&state, &body));
    let answers = futures_util::future::join_all(submissions).await;
    let ids: Vec<String> = answers
        .iter()
        .map(|(status, job)| {
            assert_eq!(*status, StatusCode::ACCEPTED, "{job}");
            job["id"].as_str().unwrap().to_owned()
        })
        .collect();
    let mut most_running = 0;
    loop {
        let (_, running) = call(&state, get("/jobs?status=RUNNING&limit=1")).await;
        most_running = most_running.max(running["total"].as_i64().unwrap());
        let (_, completed) = call(&state, get("/jobs?status=COMPLETED&limit=1")).await;
        if completed["total"] == 200 {
            break;
        }
        let (_, failed) = call(&state, get("/jobs?status=FAILED&limit=1")).await;
        assert_eq!(failed["total"], 0, "{failed}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(most_running <= 4, "{most_running} jobs ran at once");
    let (_, page) = call(&state, get("/jobs?limit=1000")).await;
    let jobs = page["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 200);
    let expected = points_csv(200, 3);
    let north = String::from_utf8(expected)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(2).unwrap().parse::<f64>().unwrap() > 0.0)
        .count();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for job in jobs {
        *seen.entry(job["id"].as_str().unwrap()).or_default() += 1;
        assert_eq!(job["attempts"], 1, "{job}");
        assert_eq!(
            job["result"]["features"].as_u64(),
            Some(north as u64),
            "{job}"
        );
    }
    assert!(ids.iter().all(|id| seen.get(id.as_str()) == Some(&1)));
    let results = std::fs::read_dir(state.data_dir().join("results"))
        .unwrap()
        .count();
    assert_eq!(results, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_submissions_are_4xx_and_create_nothing() {
    let state = Api::start(&[]);
    let dataset_id = upload(&state, "points.csv", points_csv(50, 1)).await;
    let valid_rules =
        json!([{"name": "north", "capability": "filter", "params": {"where": "ST_Y(geom) > 0"}}]);
    let missing = "00000000-0000-4000-8000-000000000000";
    for (body, words) in [
        (
            json!({"dataset_id": dataset_id, "parameters": {"rule_ids": [missing]}}),
            "no rule 00000000",
        ),
        (
            json!({"dataset_id": missing, "rules": valid_rules}),
            "no dataset",
        ),
        (
            json!({"dataset_id": "nope", "rules": valid_rules}),
            "not a UUID",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": [{"name": "b", "capability": "buffer", "params": {"distance": "far"}}]}),
            "[0].params.distance",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": [{"name": "b", "capability": "bufer", "params": {}}]}),
            "buffer",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": valid_rules, "pipeline": {"steps": []}}),
            "exactly one of",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": valid_rules, "max_retries": 99}),
            "max_retries",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": [{"name": "f", "capability": "filter", "params": {"where": "lat > 0"}}]}),
            "unknown column(s) lat",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": valid_rules, "timeout_s": 0}),
            "timeout_s",
        ),
        (
            json!({"dataset_id": dataset_id, "rules": valid_rules, "priority": 1}),
            "priority",
        ),
        (
            json!({"rules": [{"name": "f", "capability": "filter", "params": {"input": "elsewhere", "where": "1 = 1"}}]}),
            "elsewhere",
        ),
    ] {
        let (status, answer) = submit(&state, &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
        let text = answer["error"].to_string();
        assert!(text.contains(words), "{body}: {answer}");
    }
    let (_, page) = call(&state, get("/jobs")).await;
    assert_eq!(page["total"], 0, "nothing was created");

    // A rules file as the whole body, the dataset in the query.
    let (status, job) = call(
        &state,
        post_json(
            &format!("/jobs?dataset_id={dataset_id}&name=north"),
            &valid_rules,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let id = job["id"].as_str().unwrap();
    let done = wait_until(&state, id, ended).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    let (status, answer) = call(&state, post_json(&format!("/jobs/{id}/cancel"), &json!({}))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already ended COMPLETED")
    );
    let (status, _) = call(&state, get(&format!("/jobs/{missing}"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(&state, get("/jobs?status=DONE")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_job_marks_it_interrupted_after_restart() {
    let api = Api::start(&[]);
    let dataset_id = upload(&api, "points.csv", points_csv(40_000, 11)).await;
    let (_, job) = submit(
        &api,
        &json!({"name": "doomed", "dataset_id": dataset_id, "rules": long_rules()}),
    )
    .await;
    let id = job["id"].as_str().unwrap().to_owned();
    wait_until(&api, &id, |j| j["status"] == "RUNNING").await;
    let data_dir = api.kill();

    let api = Api::start_in(data_dir, &[]);
    let (_, job) = call(&api, get(&format!("/jobs/{id}"))).await;
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("FAILED"), Some("interrupted")),
        "{job}"
    );
    let (_, datasets) = call(&api, get("/datasets")).await;
    assert_eq!(datasets["total"], 1, "the catalog is intact");
    // The restarted server runs new jobs on the same data.
    let (_, job) = submit(
        &api,
        &json!({"dataset_id": dataset_id, "rules": [{"name": "north", "capability": "filter", "params": {"where": "ST_Y(geom) > 0"}}]}),
    )
    .await;
    let log = api
        .text(&format!("/jobs/{}/stream", job["id"].as_str().unwrap()))
        .await;
    assert!(
        sse_data(&log)
            .iter()
            .any(|l| l["message"].as_str().unwrap().starts_with("completed")),
        "{log}"
    );
    // The interrupted job's log survived the kill.
    let old_log = api.text(&format!("/jobs/{id}/stream")).await;
    assert!(
        sse_data(&old_log)
            .iter()
            .any(|l| l["message"].as_str().unwrap().contains("restarted mid-run")),
        "{old_log}"
    );
}
