//! The work one request can cause, tried as an attacker would against the real server (the
//! binary, so a stack overflow would show as a dead process): filters nested 60,000 deep (CQL2
//! text and JSON, rule expressions), parameters that multiply work past their bounds, a
//! densification that would fill memory, pipelines of too many steps, and a run past the
//! time-out. Every refusal is a 4xx naming the limit, and the server answers afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::world_server::{World, world};
use crate::common::{Server, multipart_body};

/// Nesting far past any limit: 60,000 levels overflow a worker's stack in a parser without one.
const DEEP: usize = 60_000;

async fn post(server: &Server, path: &str, body: &Value) -> (StatusCode, Value) {
    let response = reqwest::Client::new()
        .post(server.url(path))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The `{code, message, detail}` of an error answer.
fn error(answer: &Value) -> &Value {
    &answer["error"]
}

/// The server still answers (a process aborted by a stack overflow does not).
async fn still_serves(world: &World) {
    let (status, _, collections) = world.get("/ogc/collections").await;
    assert_eq!(status, StatusCode::OK, "{collections}");
}

/// A pipeline request over the world dataset.
fn pipeline(world_id: &str, steps: Value) -> Value {
    json!({"dataset_id": world_id, "pipeline": {"name": "limits", "steps": steps}})
}

fn world_id(world: &World) -> String {
    world
        .collection("countries")
        .split_once('.')
        .unwrap()
        .0
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_filters_are_refused_and_the_server_lives() {
    let world = world().await;
    let items = format!("/ogc/collections/{}/items", world.collection("countries"));
    let deep_text = "(".repeat(DEEP);
    let deep_not = "NOT(".repeat(DEEP / 4);
    let deep_json = "[".repeat(DEEP);
    for (lang, filter, limit) in [
        ("cql2-text", deep_text.as_str(), "depth limit"),
        ("cql2-text", deep_not.as_str(), "depth limit"),
        ("cql2-json", deep_json.as_str(), "recursion limit"),
    ] {
        let (status, _, body) = world
            .get(&format!("{items}?filter-lang={lang}&filter={filter}"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{lang}: {body}");
        let message = error(&body)["message"].as_str().unwrap_or_default();
        assert!(message.contains(limit), "{lang}: {message}");
        still_serves(&world).await;
    }
    // Nesting within the limit still filters.
    let nested = format!("{}pop_est > 100000000{}", "(".repeat(40), ")".repeat(40));
    let (status, _, page) = world
        .get(&format!("{items}?filter={}", nested.replace(' ', "%20")))
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page["numberReturned"].as_i64().unwrap() > 5, "{page}");

    // A rule expression nested as deep: sqlparser's recursion limit, a 422.
    let where_text = format!("{}pop_est > 1{}", "(".repeat(DEEP), ")".repeat(DEEP));
    let body = pipeline(
        &world_id(&world),
        json!([{"id": "deep", "capability": "filter", "input": "countries",
                "params": {"where": where_text}}]),
    );
    for route in ["/api/pipelines/execute", "/api/pipelines/validate"] {
        let body = if route == "/api/pipelines/validate" {
            body["pipeline"].clone()
        } else {
            body.clone()
        };
        let (status, answer) = post(&world.server, route, &body).await;
        let text = answer.to_string();
        assert!(text.contains("recursion limit"), "{route}: {status}");
        assert!(
            status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::OK,
            "{route}: {status}"
        );
        still_serves(&world).await;
    }
}

/// (capability, params, the parameter named in the refusal).
fn out_of_bounds() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "densify_vertices",
            json!({"max_length": 1e-12}),
            "max_length",
        ),
        (
            "cluster_kmeans",
            json!({"k": 3, "max_iter": 1_000_000_000}),
            "max_iter",
        ),
        (
            "cluster_hdbscan",
            json!({"min_samples": 1_000_000_000}),
            "min_samples",
        ),
        (
            "cluster_hdbscan",
            json!({"min_cluster_size": 1_000_000_000}),
            "min_cluster_size",
        ),
        (
            "buffer",
            json!({"distance": 1, "segments": 100_000}),
            "segments",
        ),
        ("chaikin_smooth", json!({"iterations": 1000}), "iterations"),
        (
            "min_bounding_circle",
            json!({"segments": 100_000}),
            "segments",
        ),
        (
            "offset_curve",
            json!({"distance": 1, "segments": 100_000}),
            "segments",
        ),
        (
            "morans_i",
            json!({"field": "pop_est", "permutations": 100_000_000}),
            "permutations",
        ),
        (
            "grid_create",
            json!({"size": 1e-9, "unit": "crs", "bbox": [0, 0, 10, 10]}),
            "size",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parameters_that_multiply_work_are_bounded() {
    let world = world().await;
    let id = world_id(&world);
    for (capability, params, parameter) in out_of_bounds() {
        let body = pipeline(
            &id,
            json!([{"id": "step", "capability": capability, "input": "countries", "params": params}]),
        );
        let (status, answer) = post(&world.server, "/api/pipelines/execute", &body).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{capability}: {answer}"
        );
        let problems = error(&answer)["detail"]["problems"].to_string();
        assert!(
            problems.contains(&format!("params.{parameter}")),
            "{capability} {parameter}: {answer}"
        );
    }
    still_serves(&world).await;

    // Within its bound, max_length still depends on the data: 10 m along every border of the
    // world is far more vertices than a layer may gain; refused before memory runs out.
    let densify = pipeline(
        &id,
        json!([{"id": "dense", "capability": "densify_vertices", "input": "countries",
                "params": {"max_length": 10}}]),
    );
    let started = Instant::now();
    let (status, answer) = post(&world.server, "/api/pipelines/execute", &densify).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    let message = error(&answer)["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("densify_vertices would add more than 10000000 vertices"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    still_serves(&world).await;
    // A densification within the budget runs.
    let fine = pipeline(
        &id,
        json!([{"id": "dense", "capability": "densify_vertices", "input": "countries",
                "params": {"max_length": 100, "unit": "kilometers"}}]),
    );
    let (status, answer) = post(&world.server, "/api/pipelines/execute", &fine).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_of_too_many_steps_are_refused() {
    let world = world().await;
    let id = world_id(&world);
    let steps = |count: usize| -> Vec<Value> {
        (0..count)
            .map(|i| {
                json!({"id": format!("s{i}"), "capability": "filter",
                       "params": {"where": format!("pop_est > {i}")}})
            })
            .collect()
    };
    let mut first = steps(101);
    first[0]["input"] = json!("countries");
    let too_many = pipeline(&id, json!(first));
    for route in ["/api/pipelines/execute", "/api/pipelines/validate", "/jobs"] {
        let body = match route {
            "/jobs" => json!({"dataset_id": id, "pipeline": too_many["pipeline"]}),
            "/api/pipelines/validate" => too_many["pipeline"].clone(),
            _ => too_many.clone(),
        };
        let (status, answer) = post(&world.server, route, &body).await;
        assert!(
            answer.to_string().contains("at most 100 steps"),
            "{route}: {status} {answer}"
        );
        if route == "/api/pipelines/validate" {
            assert_eq!((status, &answer["valid"]), (StatusCode::OK, &json!(false)));
        } else {
            assert_eq!(
                status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{route}: {answer}"
            );
        }
    }
    // A rules file too.
    let rules: Vec<Value> = (0..101)
        .map(|i| json!({"name": format!("r{i}"), "capability": "filter", "params": {"where": "pop_est > 1"}}))
        .collect();
    let (status, answer) = post(
        &world.server,
        "/jobs",
        &json!({"dataset_id": id, "rules": rules}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert!(answer.to_string().contains("at most 100 steps"), "{answer}");
    // 100 steps is within the limit.
    let mut hundred = steps(100);
    hundred[0]["input"] = json!("countries");
    let (status, answer) = post(
        &world.server,
        "/api/pipelines/execute",
        &pipeline(&id, json!(hundred)),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

/// `count` points spread over the globe, the same for the same `seed`.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synchronous_run_is_stopped_at_the_time_out() {
    let server = Server::start(&[("GEOMILL_JOB_TIMEOUT_S", "2")]);
    let (content_type, body) = multipart_body(&[("points.csv", points_csv(40_000, 7))], None);
    let response = reqwest::Client::new()
        .post(server.url("/datasets/upload"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let dataset: Value = response.json().await.unwrap();
    // A nearest-neighbour self-join of 40,000 points: tens of seconds of work.
    let long = json!({"dataset_id": dataset["id"], "pipeline": {"name": "long", "steps": [
        {"id": "nearest", "capability": "nearest_neighbor", "params": {"ref_layer": "points"}}
    ]}});
    let started = Instant::now();
    let (status, answer) = post(&server, "/api/pipelines/execute", &long).await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{answer}");
    assert_eq!(error(&answer)["code"], "run_timeout", "{answer}");
    assert!(
        error(&answer)["message"]
            .as_str()
            .unwrap()
            .contains("time-out of 2 s"),
        "{answer}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the engine was not stopped"
    );
    // The engine is free again: a short run completes.
    let short = json!({"dataset_id": dataset["id"], "pipeline": {"name": "short", "steps": [
        {"id": "few", "capability": "filter", "params": {"where": "CAST(id AS INTEGER) < 10"}}
    ]}});
    let (status, answer) = post(&server, "/api/pipelines/execute", &short).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result_features"], 10, "{answer}");
}
