//! The SQL guard against a corpus of hostile statements (`tests/it/sql_guard_corpus.json`): file
//! and URL reads, `ATTACH`, `COPY`, `INSTALL`, settings, DDL and DML (also behind CTEs), several
//! statements, second statements hidden in comments and strings, system catalogs, PostgreSQL's
//! file, network and session functions. Every one is sent to both SQL endpoints and refused —
//! 403 `forbidden_sql`, or 422 for text that is not SQL or names no layer — and afterwards the
//! store holds the same datasets and rows, and no file exists where an attack would write one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use axum::http::StatusCode;
use common::{call, get, post_json, world_state};
use geomill::state::AppState;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Attack {
    attack: String,
    sql: String,
    status: u16,
}

fn corpus() -> Vec<Attack> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/sql_guard_corpus.json"),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every file under `root`, as paths relative to it.
fn files(root: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            found.insert(path.strip_prefix(root).unwrap().display().to_string());
        }
    }
    found
}

/// What the store holds: the datasets, every layer's row count (read through the features
/// endpoint and through SQL), and the data directory's files (the database's own and the
/// scratch folder exports make, left empty, aside).
async fn fingerprint(state: &AppState, data: &Path) -> Value {
    let (_, datasets) = call(state, get("/datasets")).await;
    let mut counts = Vec::new();
    for dataset in datasets["datasets"].as_array().unwrap() {
        let id = dataset["id"].as_str().unwrap();
        for layer in dataset["layers"].as_array().unwrap() {
            let name = layer["name"].as_str().unwrap();
            let (_, page) = call(
                state,
                get(&format!(
                    "/api/portal/datasets/{id}/layers/{name}/features?limit=1"
                )),
            )
            .await;
            let query = json!({"query": format!("SELECT count(*) AS n FROM \"{id}/{name}\"")});
            let (status, rows) = call(state, post_json("/api/portal/sql/execute", &query)).await;
            assert_eq!(status, StatusCode::OK, "{rows}");
            counts.push(json!([id, name, page["total"], rows["rows"][0]["n"]]));
        }
    }
    let stored: Vec<String> = files(data)
        .into_iter()
        .filter(|f| !f.starts_with("geomill.duckdb") && f != "tmp")
        .collect();
    json!({"datasets": datasets, "counts": counts, "files": stored})
}

#[tokio::test]
async fn every_hostile_statement_is_refused_and_the_store_is_unchanged() {
    let (dir, state, _) = world_state(|config| config.sql_timeout_s = 5).await;
    let data = dir.path().join("data");
    // The folder the attacks write to (`{dir}`): it must stay empty.
    let target = tempfile::tempdir().unwrap();
    let attacks = corpus();
    assert!(attacks.len() >= 40, "{} attacks", attacks.len());
    let distinct: BTreeSet<&str> = attacks.iter().map(|a| a.sql.as_str()).collect();
    assert_eq!(
        distinct.len(),
        attacks.len(),
        "the corpus repeats a statement"
    );

    let before = fingerprint(&state, &data).await;
    assert_eq!(before["counts"].as_array().unwrap().len(), 2, "{before}");
    let mut forbidden = 0;
    for attack in &attacks {
        let sql = attack
            .sql
            .replace("{dir}", &target.path().display().to_string());
        for uri in ["/api/portal/sql/execute", "/api/portal/sql/export"] {
            let body = json!({"query": sql, "format": "csv"});
            let (status, answer) = call(&state, post_json(uri, &body)).await;
            let what = format!("{} ({uri}): {sql}\n{answer}", attack.attack);
            assert_eq!(status.as_u16(), attack.status, "{what}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(!message.is_empty(), "{what}");
            if attack.status == 403 {
                assert_eq!(answer["error"]["code"], "forbidden_sql", "{what}");
            }
        }
        forbidden += usize::from(attack.status == 403);
    }
    assert!(
        forbidden >= 40,
        "{forbidden} statements refused by the guard"
    );
    assert_eq!(
        fingerprint(&state, &data).await,
        before,
        "the store changed"
    );
    assert!(
        files(target.path()).is_empty(),
        "an attack wrote {:?}",
        files(target.path())
    );
}

#[tokio::test]
async fn refusals_name_what_was_refused() {
    let (_dir, state, _) = world_state(|_| {}).await;
    for (sql, words) in [
        (
            "SELECT * FROM read_csv('/etc/passwd')",
            "table function read_csv",
        ),
        (
            "SELECT pg_read_file('/etc/passwd')",
            "function pg_read_file",
        ),
        ("DELETE FROM meta.datasets", "not DELETE"),
        ("SELECT 1; SELECT 2", "several statements"),
        (
            "SELECT 1 /* /* */ , '*/; DELETE FROM meta.datasets; --'",
            "nested block comments",
        ),
        ("SELECT E'\\' , ' ; DROP TABLE x; --'", "escape strings"),
        (
            "WITH x AS (SELECT 1) INSERT INTO meta.datasets SELECT * FROM x",
            "writes",
        ),
        ("SELECT * INTO copy FROM \"world/cities\"", "SELECT INTO"),
        ("SELECT * FROM pg_settings", "system catalog"),
        ("SELECT * FROM information_schema.tables", "qualified name"),
    ] {
        let (status, body) = call(
            &state,
            post_json("/api/portal/sql/execute", &json!({"query": sql})),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{sql}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{sql}: {message}");
    }
}
