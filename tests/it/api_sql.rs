//! The SQL endpoints: read-only queries over stored layers, checked against GDAL's SQL engine;
//! everything that is not one read-only query is refused; admin key; time-out; export.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{call, call_raw, gdal, get, ogrinfo_summary, world_state};
use serde_json::{Value, json};

fn sql(uri: &str, body: &Value, key: Option<&str>) -> Request<Body> {
    let mut request = Request::post(uri).header("content-type", "application/json");
    if let Some(key) = key {
        request = request.header("x-admin-key", key);
    }
    request.body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn queries_answer_what_spatialite_answers() {
    let (_dir, state, gpkg) = world_state(|_| {}).await;
    let query = json!({"query": "SELECT continent, count(*) AS n FROM \"world/countries\" WHERE pop_est > 100000000 GROUP BY continent ORDER BY continent"});
    let (status, body) = call(&state, sql("/api/portal/sql/execute", &query, None)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ours: Vec<String> = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}={}", r["continent"].as_str().unwrap(), r["n"]))
        .collect();
    let text = gdal(
        "ogrinfo",
        &[
            "-ro",
            "-q",
            "-dialect",
            "SQLite",
            "-sql",
            "SELECT continent, count(*) AS n FROM countries WHERE pop_est > 100000000 GROUP BY continent ORDER BY continent",
            &gpkg,
        ],
    );
    let continents = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("continent (String) = "))
        .map(str::to_owned);
    let counts = text.lines().filter_map(|l| {
        l.trim()
            .split_once(") = ")
            .filter(|(k, _)| k.starts_with("n ("))
            .map(|(_, v)| v.to_owned())
    });
    let theirs: Vec<String> = continents
        .zip(counts)
        .map(|(c, n)| format!("{c}={n}"))
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(
        body["columns"][0],
        json!({"name": "continent", "type": "VARCHAR"})
    );

    // A spatial join between two layers, CTEs, and geometries as WKT.
    let query = json!({"query": "WITH big AS (SELECT * FROM \"world/countries\" WHERE pop_est > 100000000) \
        SELECT c.name, ST_AsText(c.geom) AS wkt FROM \"world/cities\" c JOIN big b ON ST_Within(c.geom, b.geom) ORDER BY c.name LIMIT 3"});
    let (status, body) = call(&state, sql("/api/portal/sql/execute", &query, None)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["rows"][0]["wkt"]
            .as_str()
            .unwrap()
            .starts_with("POINT"),
        "{body}"
    );

    let (status, body) = call(
        &state,
        sql(
            "/api/portal/sql/execute",
            &json!({"query": "SELECT * FROM \"world/cities\"", "limit": 10}),
            None,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (body["row_count"].clone(), body["truncated"].clone()),
        (json!(10), json!(true))
    );
}

#[tokio::test]
async fn anything_but_one_read_only_query_is_refused_and_changes_nothing() {
    let (_dir, state, _) = world_state(|_| {}).await;
    let before = call(&state, get("/datasets")).await.1;
    for query in [
        "DROP TABLE \"world/cities\"",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM ST_Read('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        "SELECT * FROM meta.datasets",
        "ATTACH '/tmp/x.duckdb'",
        "COPY \"world/cities\" TO '/tmp/x.csv'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "PRAGMA database_list",
        "SET threads = 1",
        "SELECT 1; DELETE FROM \"world/cities\"",
        "SELECT getenv('HOME')",
    ] {
        let (status, body) = call(
            &state,
            sql("/api/portal/sql/execute", &json!({"query": query}), None),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{query}: {body}");
        assert_eq!(body["error"]["code"], "forbidden_sql", "{query}");
    }
    // Text that is not SQL is not forbidden, just unreadable.
    let (status, body) = call(
        &state,
        sql(
            "/api/portal/sql/execute",
            &json!({"query": "SELECT (1"}),
            None,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "invalid_sql");
    let (status, body) = call(
        &state,
        sql(
            "/api/portal/sql/execute",
            &json!({"query": "SELECT * FROM oceans"}),
            None,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("oceans name no stored layer"),
        "{body}"
    );
    assert_eq!(call(&state, get("/datasets")).await.1, before);
}

#[tokio::test]
async fn the_admin_key_guards_both_endpoints_and_slow_queries_stop() {
    let (_dir, state, _) = world_state(|c| {
        c.admin_key = Some("s3cret".into());
        c.sql_timeout_s = 1;
    })
    .await;
    let query = json!({"query": "SELECT count(*) AS n FROM \"world/cities\""});
    for uri in ["/api/portal/sql/execute", "/api/portal/sql/export"] {
        assert_eq!(
            call(&state, sql(uri, &query, None)).await.0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            call(&state, sql(uri, &query, Some("wrong"))).await.0,
            StatusCode::FORBIDDEN
        );
    }
    let (status, body) = call(
        &state,
        sql("/api/portal/sql/execute", &query, Some("s3cret")),
    )
    .await;
    assert_eq!(
        (status, body["rows"][0]["n"].clone()),
        (StatusCode::OK, json!(243))
    );

    let slow = json!({"query": "SELECT count(*) FROM \"world/cities\" a, \"world/cities\" b, \"world/cities\" c, \"world/cities\" d WHERE a.name < b.name || c.name || d.name"});
    let started = std::time::Instant::now();
    let (status, body) = call(
        &state,
        sql("/api/portal/sql/execute", &slow, Some("s3cret")),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 1 s"),
        "{body}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the query was not stopped"
    );
}

#[tokio::test]
async fn query_results_export_as_files_gdal_reads() {
    let (dir, state, _) = world_state(|_| {}).await;
    let query = json!({"query": "SELECT name, geom FROM \"world/cities\" WHERE ST_Y(geom) > 50", "format": "geojson"});
    let (status, bytes) = call_raw(&state, sql("/api/portal/sql/export", &query, None)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    let path = dir.path().join("north.geojson");
    std::fs::write(&path, bytes).unwrap();
    let (count, epsg) = ogrinfo_summary(&path.display().to_string(), "query");
    let (_, body) = call(
        &state,
        sql(
            "/api/portal/sql/execute",
            &json!({"query": "SELECT count(*) AS n FROM \"world/cities\" WHERE ST_Y(geom) > 50"}),
            None,
        ),
    )
    .await;
    assert_eq!(json!(count), body["rows"][0]["n"]);
    assert_eq!(epsg.as_deref(), Some("EPSG:4326"));
}
