//! The HTTP API fuzzed by schemathesis against its own OpenAPI document: the real binary (with
//! PostGIS, so projects are served, and a world dataset, so dataset routes have data) answers
//! every operation with no server error, and only with statuses, content types and bodies the
//! document describes. Bounded: a fixed seed and a fixed number of examples per operation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::http::HttpApi;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The checks the document is held to.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
                      response_schema_conformance";
/// Test cases per operation and phase; with the seed, what keeps the run short and repeatable.
const MAX_EXAMPLES: &str = "50";
const SEED: &str = "20240601";
/// Past this the run is stopped and the test fails.
const DEADLINE: Duration = Duration::from_secs(300);

/// Operations that are not fuzzed, each for a reason of its own.
const EXCLUDED: &[&str] = &[
    // Both fetch whatever URL they are given: a fuzzed URL would send the server's requests
    // (and name lookups) off this machine. Their guard and errors are tested with local servers
    // (api_remote_layers.rs, url_guard.rs).
    "POST /datasets/import-url",
    "POST /datasets/ogc",
    // An endless event stream: it only speaks when rules are validated or written elsewhere,
    // so a reader waits for its first event forever (api_rules.rs reads it).
    "GET /rules/eval-stream",
    // The same for trigger evaluations (api_triggers.rs reads it).
    "GET /triggers/eval-stream",
];

/// The ids the run works on: fuzzed ids would only ever find nothing.
struct Fixtures {
    /// The world dataset: `world.gpkg`, the name the document's examples use, with layers
    /// `countries` and `cities`.
    dataset: String,
    /// A stored rule.
    rule: String,
    /// A completed job.
    job: String,
}

/// The schemathesis configuration: 501 is the documented answer of the routes listed as not
/// implemented yet; dataset, collection, rule and job routes get the fixtures' ids; and the
/// deletes get an id that names nothing, so that the fixtures stay for the other operations.
fn config(fixtures: &Fixtures) -> String {
    let Fixtures { dataset, rule, job } = fixtures;
    let nothing = "00000000-0000-4000-8000-000000000000";
    format!(
        r#"
[[operations]]
include-by = '/summary == "Not implemented yet"'
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "501"]

[[operations]]
include-name = ["DELETE /api/portal/datasets/{{id}}", "DELETE /rules/{{id}}"]
parameters = {{ "path.id" = "{nothing}" }}

[[operations]]
include-path-regex = '^/(datasets|api/portal/datasets)/\{{id\}}'
exclude-method = "DELETE"
parameters = {{ "path.id" = "{dataset}", "path.layer" = "countries", "path.field" = "pop_est" }}

[[operations]]
include-path-regex = '^/ogc/collections/\{{id\}}'
parameters = {{ "path.id" = "{dataset}.cities" }}

[[operations]]
include-path-regex = '^/rules/\{{id\}}'
exclude-method = "DELETE"
parameters = {{ "path.id" = "{rule}" }}

[[operations]]
include-path-regex = '^/jobs/\{{id\}}'
parameters = {{ "path.id" = "{job}" }}
"#
    )
}

/// "METHOD /path" of the operations listed as not implemented whose path parameters the document
/// does not declare: schemathesis cannot build a request for them (a schema error). The list
/// empties itself once the 501 entries declare their path parameters.
fn undeclared_path_parameters(document: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for (path, operations) in document["paths"].as_object().expect("paths") {
        for (method, operation) in operations.as_object().expect("operations") {
            if operation["summary"] != "Not implemented yet" || !path.contains('{') {
                continue;
            }
            let declared = operation["parameters"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["in"] == "path"));
            if !declared {
                names.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    names
}

/// Runs schemathesis on `arguments` in `folder`; answers whether it passed and its output.
fn schemathesis(folder: &std::path::Path, arguments: &[String]) -> (bool, String) {
    let python = std::env::var("GEOMILL_PYTHON").unwrap_or_else(|_| "python3".into());
    let output = folder.join("output.txt");
    let log = std::fs::File::create(&output).expect("output file");
    let mut child = Command::new(&python)
        .args(["-m", "schemathesis.cli"])
        .args(arguments)
        .current_dir(folder)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("output file"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("{python} -m schemathesis.cli (scripts/setup.sh test): {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut text = std::fs::read_to_string(&output).unwrap_or_default();
    if status.is_none() {
        text.push_str(&format!("\nstopped after {} s", DEADLINE.as_secs()));
    }
    (status.is_some_and(|s| s.success()), text)
}

/// The world dataset, a stored rule and a completed job that runs it, made through the API.
async fn fixtures(api: &HttpApi) -> Fixtures {
    let dataset = api.upload_world().await;
    let (status, rule) = api
        .post(
            "/rules",
            &json!({"name": "populous", "capability": "filter",
                    "config": {"input": "countries", "where": "pop_est > 100000000"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rule}");
    let rule = rule["id"].as_str().expect("rule id").to_owned();
    let (status, job) = api
        .post(
            "/jobs",
            &json!({"name": "populous", "dataset_id": dataset,
                    "parameters": {"rule_ids": [rule]}}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let job = job["id"].as_str().expect("job id").to_owned();
    let started = Instant::now();
    loop {
        let (_, state) = api.get(&format!("/jobs/{job}")).await;
        match state["status"].as_str() {
            Some("COMPLETED") => break,
            Some("PENDING" | "RUNNING") if started.elapsed() < Duration::from_secs(60) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            _ => panic!("the fixture job did not complete: {state}"),
        }
    }
    Fixtures { dataset, rule, job }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_answers_as_its_openapi_document_says() {
    let dsn = common::postgis::fresh_database("schemathesis").await;
    // Open mode (no API key), every tier's routes and no rate limit: every request the fuzzer
    // sends is served.
    let api = HttpApi::start(&[
        ("GEOMILL_POSTGIS_DSN", &dsn),
        ("GEOMILL_TIER", "enterprise"),
        ("GEOMILL_RATE_LIMIT", "0"),
    ]);
    let fixtures = fixtures(&api).await;
    let (status, document) = api.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);

    let folder = tempfile::tempdir().expect("tempdir");
    let config_file = folder.path().join("schemathesis.toml");
    std::fs::write(&config_file, config(&fixtures)).expect("config file");
    let mut arguments: Vec<String> = [
        "--config-file",
        &config_file.display().to_string(),
        "--no-color",
        "run",
        &api.server.url("/openapi.json"),
        "--checks",
        CHECKS,
        "--max-examples",
        MAX_EXAMPLES,
        "--seed",
        SEED,
        // One worker: Python 3.11's AST constructor is not thread-safe (CPython gh-106905), and
        // hypothesis parses lambdas while describing strategies, which failed a run at random.
        "--workers",
        "1",
        "--continue-on-failure",
        "--generation-database",
        "none",
        "--request-timeout",
        "60",
        // Open mode: no credentials are sent (a wrong key would be refused).
        "--generation-with-security-parameters",
        "false",
    ]
    .map(str::to_owned)
    .to_vec();
    let excluded = EXCLUDED
        .iter()
        .map(|name| (*name).to_owned())
        .chain(undeclared_path_parameters(&document));
    for name in excluded {
        arguments.push("--exclude-name".into());
        arguments.push(name);
    }

    let run_in = folder.path().to_owned();
    let started = Instant::now();
    let (passed, output) = tokio::task::spawn_blocking(move || schemathesis(&run_in, &arguments))
        .await
        .expect("schemathesis run");
    assert!(
        passed,
        "schemathesis found responses that contradict /openapi.json:\n{output}"
    );
    println!("schemathesis passed in {:.0?}", started.elapsed());
}
