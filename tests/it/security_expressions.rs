//! Rule expressions through the HTTP API on a running server, as an attacker sends them: every
//! string-literal prefix in every expression-taking capability on both SQL engines is refused
//! before any SQL runs, and what the planner prints itself (quotes, minus signs, line breaks in
//! strings) runs as the one expression it is.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Server, postgis::cluster_dsn, world_gpkg};

/// The literal forms sqlparser prints back without escaping, and the others the planner
/// refuses too: each wraps a payload that leaves the literal when printed back raw.
const PREFIXES: &[&str] = &["N", "X", "B", "E", "U&"];

/// Expressions that leave their literal: a subquery reading a file, and a second statement
/// writing `marker`.
fn attacks(marker: &Path) -> Vec<String> {
    let marker = marker.display();
    let mut texts: Vec<String> = PREFIXES
        .iter()
        .flat_map(|prefix| {
            [
                format!(
                    "name = {prefix}'x'' = (SELECT content FROM read_text(''/etc/passwd'')) OR '''' = '''"
                ),
                format!("name = {prefix}'x''; COPY (SELECT 1) TO ''{marker}''; SELECT '''"),
            ]
        })
        .collect();
    texts.push(format!(
        "name = $$x$$ OR name = $t$'; COPY (SELECT 1) TO '{marker}'; SELECT '$t$"
    ));
    texts
}

/// The capabilities that take an expression, each with `text` where the expression goes.
fn steps_with(text: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("filter", json!({"where": text})),
        ("calculate", json!({"expressions": {"x": text}})),
        (
            "case_when",
            json!({"field": "x", "cases": [{"when": text, "then": "a"}], "else": "b"}),
        ),
    ]
}

async fn execute(
    server: &Server,
    dataset: &str,
    engine: &str,
    step: (&str, Value),
) -> (u16, Value) {
    let (capability, params) = step;
    let request = json!({
        "pipeline": {"name": "attack", "steps": [
            {"id": "s", "capability": capability, "input": "countries", "params": params}
        ]},
        "dataset_id": dataset,
        "engine": engine,
    });
    let response = reqwest::Client::new()
        .post(server.url("/api/pipelines/execute"))
        .json(&request)
        .send()
        .await
        .expect("execute");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn world_server(dir: &Path) -> (Server, String) {
    let dsn = cluster_dsn();
    let server = Server::start(&[("GEOMILL_POSTGIS_DSN", dsn.as_str())]);
    let dataset = server
        .upload(Path::new(&world_gpkg(dir)), "world.gpkg")
        .await;
    let id = dataset["id"].as_str().expect("dataset id").to_owned();
    (server, id)
}

#[tokio::test]
async fn prefixed_literals_are_refused_in_every_expression_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("written-by-an-expression.csv");
    let (server, dataset) = world_server(dir.path()).await;
    for engine in ["embedded", "postgis"] {
        for text in attacks(&marker) {
            for step in steps_with(&text) {
                let capability = step.0;
                let (status, answer) = execute(&server, &dataset, engine, step).await;
                let said = answer.to_string();
                assert_eq!(
                    status, 422,
                    "{capability} on {engine} with {text}: {answer}"
                );
                assert!(
                    said.contains("is not supported in rule expressions"),
                    "{capability} on {engine} with {text} was not refused by the planner: {answer}"
                );
                assert!(!said.contains("root:"), "{said}");
                assert!(!marker.exists(), "{text} wrote {}", marker.display());
            }
        }
    }
}

#[tokio::test]
async fn literals_the_planner_prints_run_as_one_expression_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let (server, dataset) = world_server(dir.path()).await;
    // Two minus signs and a line break in a string: printed back raw, `--` would start a
    // comment and the string's second line would run as SQL.
    let tricky = "pop_est > - -1 AND name <> 'x\n) OR (1 = 1' AND name <> 'Cote d''Ivoire'";
    let plain = "pop_est > 1 AND name <> 'Cote d''Ivoire'";
    for engine in ["embedded", "postgis"] {
        let (status, expected) = execute(
            &server,
            &dataset,
            engine,
            ("filter", json!({"where": plain})),
        )
        .await;
        assert_eq!(status, 200, "{expected}");
        let (status, answer) = execute(
            &server,
            &dataset,
            engine,
            ("filter", json!({"where": tricky})),
        )
        .await;
        assert_eq!(status, 200, "{engine}: {answer}");
        assert_eq!(
            answer["result_features"], expected["result_features"],
            "{engine}: {answer}"
        );
        assert!(
            answer["result_features"].as_i64().unwrap() > 100,
            "{answer}"
        );
    }
}
