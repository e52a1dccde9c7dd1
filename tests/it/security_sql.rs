//! The SQL console, its export and session queries against text DuckDB reads differently from
//! the guard's parser, and against table names DuckDB would read as files: a backslash ending a
//! hex string (`X'\'`, where DuckDB's string ends and the other parser's goes on) hides further
//! statements (`COPY ... TO`, `ATTACH`, `INSTALL`), a `))` closes the export's `COPY (...)` and
//! starts statements of its own, and `FROM "/path/file.csv"` (or a glob, Parquet, JSON) reads a
//! server file. Every one is refused through the real server on all three endpoints, no file
//! appears where one would be written, and no file's content is answered.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::Path;

use common::http::HttpApi;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// What a file the server must never read holds; no answer may contain it.
const MARKER: &str = "marker_5c1e7a_never_answered";

/// A server with the world dataset and a session holding its `countries` layer.
async fn world_and_session() -> (HttpApi, String) {
    let api = HttpApi::start(&[]);
    let dataset = api.upload_world().await;
    let (status, session) = api.post("/sessions", &json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    let (status, table) = api
        .post(
            &format!("/sessions/{id}/layers"),
            &json!({"dataset_id": dataset, "layer": "countries"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{table}");
    (api, id)
}

/// Sends `sql` to the console, its export and the session query; each must refuse it (403
/// `forbidden_sql` or 422) without answering `MARKER`.
async fn refused_everywhere(api: &HttpApi, session: &str, sql: &str) {
    for uri in [
        "/api/portal/sql/execute".to_owned(),
        "/api/portal/sql/export".to_owned(),
        format!("/sessions/{session}/query"),
    ] {
        let body = if uri.ends_with("export") {
            json!({"query": sql, "format": "csv"})
        } else {
            json!({"query": sql})
        };
        let (status, answer) = api.post(&uri, &body).await;
        assert!(
            status == StatusCode::FORBIDDEN || status == StatusCode::UNPROCESSABLE_ENTITY,
            "{uri} answered {status} to {sql:?}: {answer}"
        );
        assert!(
            !answer.to_string().contains(MARKER),
            "{uri} answered a file's content to {sql:?}: {answer}"
        );
        if status == StatusCode::FORBIDDEN {
            assert_eq!(answer["error"]["code"], "forbidden_sql", "{uri}: {answer}");
        }
    }
}

fn assert_absent(paths: &[&Path]) {
    for path in paths {
        assert!(!path.exists(), "an attack wrote {}", path.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_hidden_after_a_hex_string_are_refused_and_write_nothing() {
    let (api, session) = world_and_session().await;
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let (copied, attached, installed) =
        (at("copied.csv"), at("attached.duckdb"), at("installed.csv"));
    let d = dir.path().display();
    // To the guard's parser the hex string runs to the `'` ending the last comment: one
    // SELECT. To DuckDB it ends at the backslash, and the statements after it run.
    for sql in [
        format!(
            "SELECT X'\\' AS a; COPY (SELECT '{MARKER}' AS m) TO $${d}/copied.csv$$; SELECT 1 AS c --'\n"
        ),
        format!("SELECT X'\\' AS a; ATTACH $${d}/attached.duckdb$$ AS evil; SELECT 1 AS c --'\n"),
        format!(
            "SELECT X'\\' AS a; COPY (SELECT 1 AS m) TO $${d}/installed.csv$$; INSTALL spatial; LOAD spatial; SELECT 1 AS c --'\n"
        ),
        // `$$` strings hide the quote that ends the other parser's string.
        format!(
            "SELECT X'\\' AS a, $$x$$ AS b; COPY (SELECT 2 AS m) TO $${d}/copied.csv$$; SELECT $$'$$ AS c"
        ),
    ] {
        refused_everywhere(&api, &session, &sql).await;
        assert_absent(&[&copied, &attached, &installed]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closing_double_parenthesis_does_not_start_statements_in_the_export() {
    let (api, session) = world_and_session().await;
    let dir = tempfile::tempdir().unwrap();
    let (written, attached) = (
        dir.path().join("written.csv"),
        dir.path().join("attached.duckdb"),
    );
    let d = dir.path().display();
    // The export runs `COPY (SELECT * FROM (<query>)) TO '<scratch file>' (...)`: `))` ends
    // that COPY, and the text after it would be statements of their own.
    for sql in [
        format!(
            "SELECT X'\\' AS a)) TO $${d}/written.csv$$ (FORMAT csv); COPY (SELECT * FROM (SELECT 2 AS b --'\n"
        ),
        format!(
            "SELECT X'\\' AS a)) TO $${d}/written.csv$$ (FORMAT csv); ATTACH $${d}/attached.duckdb$$ AS evil; COPY (SELECT * FROM (SELECT 2 AS b --'\n"
        ),
        format!(
            "SELECT X'\\' AS a)) TO $${d}/written.csv$$ (FORMAT csv); INSTALL spatial; COPY (SELECT * FROM (SELECT 2 AS b --'\n"
        ),
        format!(
            "SELECT 1 AS a)) TO '{d}/written.csv' (FORMAT csv); COPY (SELECT * FROM (SELECT 2 AS b"
        ),
    ] {
        refused_everywhere(&api, &session, &sql).await;
        assert_absent(&[&written, &attached]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_queries_read_no_file_by_its_path() {
    let (api, session) = world_and_session().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("secret.csv"), format!("secret\n{MARKER}\n")).unwrap();
    std::fs::write(
        dir.path().join("secret.json"),
        format!("{{\"secret\": \"{MARKER}\"}}\n"),
    )
    .unwrap();
    // A Parquet file holding the marker, written by an engine of the test's own.
    let engine = geomill_backends::duckdb::EmbeddedEngine::open(&Default::default()).unwrap();
    engine
        .execute_batch(&format!(
            "COPY (SELECT '{MARKER}' AS secret) TO '{d}/secret.parquet' (FORMAT parquet)"
        ))
        .unwrap();

    // The session still answers over its own table (in any case), also through a CTE.
    for sql in [
        "SELECT count(*) AS n FROM countries",
        "SELECT count(*) AS n FROM Countries",
        "WITH c AS (SELECT * FROM countries) SELECT count(*) AS n FROM c",
    ] {
        let (status, rows) = api
            .post(
                &format!("/sessions/{session}/query"),
                &json!({"query": sql}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{sql}: {rows}");
        assert_eq!(rows["rows"][0]["n"], 177, "{sql}");
    }
    // Names of no table of the session: the database's own tables and views are not in reach.
    for sql in [
        "SELECT * FROM datasets",
        "SELECT * FROM layers",
        "SELECT * FROM duckdb_settings",
        "SELECT * FROM countries, cities",
    ] {
        let (status, answer): (StatusCode, Value) = api
            .post(
                &format!("/sessions/{session}/query"),
                &json!({"query": sql}),
            )
            .await;
        assert!(
            status == StatusCode::FORBIDDEN || status == StatusCode::UNPROCESSABLE_ENTITY,
            "{sql}: {status} {answer}"
        );
    }

    for sql in [
        format!("SELECT * FROM \"{d}/secret.csv\""),
        format!("SELECT * FROM '{d}/secret.csv'"),
        format!("SELECT * FROM \"{d}/*.csv\""),
        format!("SELECT * FROM \"{d}/secret.parquet\""),
        format!("SELECT * FROM \"{d}/secret.json\""),
        format!("SELECT c.name, s.* FROM countries c, \"{d}/secret.csv\" s"),
        format!("SELECT * FROM countries WHERE name IN (SELECT secret FROM \"{d}/secret.csv\")"),
        format!("WITH s AS (SELECT * FROM \"{d}/secret.parquet\") SELECT * FROM s"),
        format!("SELECT * FROM \"file://{d}/secret.csv\""),
        format!("SELECT * FROM \"{d}/secret.csv\" UNION ALL SELECT name FROM countries"),
    ] {
        refused_everywhere(&api, &session, &sql).await;
    }
}
