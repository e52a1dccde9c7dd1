//! Persistent mode (`GEOMILL_ENGINE=postgis`) through the real server: an upload lands in
//! PostgreSQL tables (SRID, GiST index, `fid` key) with the catalog in schema `geomill`;
//! features, tiles, fields, SQL and exports read PostgreSQL, so a row inserted there with
//! `psql` is served at once; runs default to PostGIS; a second server on the same database
//! finds the datasets; a delete drops the tables.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::http::HttpApi;
use common::postgis::{fresh_database, psql};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn persistent(dsn: &str) -> HttpApi {
    HttpApi::start(&[("GEOMILL_ENGINE", "postgis"), ("GEOMILL_POSTGIS_DSN", dsn)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datasets_live_in_postgis_and_are_served_from_there() {
    let dsn = fresh_database("persistent").await;
    let api = persistent(&dsn);
    let dataset = api.upload_world().await;

    // The catalog and the tables are PostgreSQL's.
    assert_eq!(
        psql(
            &dsn,
            &format!("SELECT name FROM geomill.datasets WHERE id = '{dataset}'")
        ),
        "world.gpkg"
    );
    let countries_table = psql(
        &dsn,
        &format!(
            "SELECT table_name FROM geomill.layers WHERE dataset_id = '{dataset}' AND name = 'countries'"
        ),
    );
    let qualified = format!("geomill_data.{countries_table}");
    assert_eq!(
        psql(&dsn, &format!("SELECT count(*) FROM {qualified}")),
        "177"
    );
    assert_eq!(
        psql(
            &dsn,
            &format!("SELECT DISTINCT ST_SRID(geom) FROM {qualified}")
        ),
        "4326"
    );
    let indexes = psql(
        &dsn,
        &format!("SELECT indexdef FROM pg_indexes WHERE tablename = '{countries_table}'"),
    );
    assert!(indexes.contains("gist (geom)"), "{indexes}");
    assert!(indexes.contains("(fid)"), "{indexes}");
    assert_eq!(
        psql(&dsn, &format!("SELECT min(fid), max(fid) FROM {qualified}")),
        "1|177"
    );

    // Features come from PostgreSQL, ids are the `fid` keys, `fid` is not an attribute.
    let collection = format!("{dataset}.countries");
    let (status, page) = api
        .get(&format!(
            "/ogc/collections/{collection}/items?bbox=-10,35,30,60&limit=100"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let in_europe = page["numberMatched"].as_i64().unwrap();
    assert!(in_europe > 20, "{page}");
    let france = page["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["properties"]["name"] == "France")
        .expect("France in the box")
        .clone();
    assert!(france["properties"].get("fid").is_none(), "{france}");
    let fid = france["id"].as_i64().unwrap();
    assert_eq!(
        psql(
            &dsn,
            &format!("SELECT name FROM {qualified} WHERE fid = {fid}")
        ),
        "France"
    );
    let (status, one) = api
        .get(&format!("/ogc/collections/{collection}/items/{fid}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["properties"]["name"], "France");

    // A row written by another PostgreSQL client is served at once.
    psql(
        &dsn,
        &format!(
            "INSERT INTO {qualified} (name, continent, pop_est, iso_a3, gdp_md_est, geom) \
             VALUES ('Testland', 'Europe', 1, 'TST', 1, ST_GeomFromText('POLYGON((5 45, 6 45, 6 46, 5 46, 5 45))', 4326))"
        ),
    );
    let (_, page) = api
        .get(&format!(
            "/ogc/collections/{collection}/items?bbox=-10,35,30,60&limit=1"
        ))
        .await;
    assert_eq!(page["numberMatched"].as_i64().unwrap(), in_europe + 1);
    // A CQL2 filter (read through DuckDB's scan of the table) sees the row too.
    let (status, page) = api
        .get(&format!(
            "/ogc/collections/{collection}/items?filter=iso_a3%20%3D%20%27TST%27"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["numberMatched"], 1, "{page}");
    assert_eq!(page["features"][0]["properties"]["name"], "Testland");
    let (status, rows) = api
        .post(
            "/api/portal/sql/execute",
            &json!({"query": "SELECT name FROM \"world.gpkg/countries\" WHERE iso_a3 = 'TST'"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!(rows["rows"][0]["name"], "Testland", "{rows}");

    // A tile of the layer, and a field's statistics, read the same table.
    let tile = api
        .client
        .get(
            api.server
                .url(&format!("/ogc/collections/{collection}/tiles/3/4/2.mvt")),
        )
        .send()
        .await
        .unwrap();
    let status = tile.status();
    let bytes = tile.bytes().await.unwrap();
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    assert!(!bytes.is_empty());

    // A run without an engine runs on PostGIS and reads the stored tables.
    let (status, run) = api
        .post(
            "/api/pipelines/execute",
            &json!({"dataset_id": dataset, "pipeline": {"name": "big", "steps": [
                {"id": "big", "capability": "filter", "input": "countries",
                 "params": {"where": "pop_est > 100000000 OR iso_a3 = 'TST'"}}]}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    let expected: i64 = psql(
        &dsn,
        &format!("SELECT count(*) FROM {qualified} WHERE pop_est > 100000000 OR iso_a3 = 'TST'"),
    )
    .parse()
    .unwrap();
    assert_eq!(run["result_features"].as_i64(), Some(expected), "{run}");

    // Another server on the same database sees the same datasets.
    let second = persistent(&dsn);
    let (status, found) = second.get(&format!("/datasets/{dataset}")).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["name"], "world.gpkg");

    // A delete removes the tables and the catalog rows.
    let (status, _) = api.delete(&format!("/api/portal/datasets/{dataset}")).await;
    assert!(status.is_success(), "{status}");
    assert_eq!(
        psql(
            &dsn,
            &format!("SELECT count(*) FROM pg_tables WHERE tablename = '{countries_table}'")
        ),
        "0"
    );
    assert_eq!(psql(&dsn, "SELECT count(*) FROM geomill.layers"), "0");
    let (status, _) = second.get(&format!("/datasets/{dataset}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let _: Value = found;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_going_away_is_a_503_and_its_return_is_picked_up() {
    let cluster = common::postgis::OwnCluster::start();
    let api = persistent(&cluster.dsn());
    let dataset = api.upload_world().await;
    let items = format!("/ogc/collections/{dataset}.countries/items?limit=1");
    let (status, _) = api.get(&items).await;
    assert_eq!(status, StatusCode::OK);

    cluster.stop();
    for path in ["/datasets", items.as_str()] {
        let (status, body) = api.get(path).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("PostGIS"), "{message}");
    }
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{health}");
    assert_eq!(health["components"]["postgis"], "unavailable");

    cluster.resume();
    let (status, page) = api.get(&items).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["numberMatched"], 177);
    let (status, list) = api.get("/datasets").await;
    assert_eq!(status, StatusCode::OK, "{list}");
}
