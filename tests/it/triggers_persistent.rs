//! Triggers on a stored dataset in persistent mode, end to end: the layers live in PostgreSQL,
//! `POST /datasets/{id}/enable_tracking` installs a row trigger on the layer's table, and a
//! city INSERTed with `psql` inside a country reaches the WebSocket client filtered on the
//! cities layer within a second — and not the client filtered on the countries layer; a city
//! in the open sea fires nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::time::Duration;

use common::live::{connect, next_event, send, serve, upload_world};
use common::postgis::{fresh_database, psql};
use geomill::config::Config;
use geomill::state::AppState;
use geomill_planner::optimizer::EngineMode;
use reqwest::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_city_inserted_with_psql_fires_the_trigger_of_the_cities_layer_only() {
    let dsn = fresh_database("triggers_persistent").await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::with_data_dir(dir.path());
    config.engine = EngineMode::Postgis;
    config.postgis_dsn = Some(dsn.clone());
    let state = AppState::open(config).unwrap();
    let address = serve(&state).await;
    let url = |path: &str| format!("http://{address}{path}");

    let scratch = tempfile::tempdir().unwrap();
    let dataset = upload_world(address, scratch.path()).await;
    let id = dataset["id"].as_str().unwrap().to_owned();
    let (status, tracking) = send(
        Method::POST,
        url(&format!("/datasets/{id}/enable_tracking")),
        Some(json!({"layer": "cities"})),
    )
    .await;
    assert_eq!(status, 200, "{tracking}");
    let (status, trigger) = send(
        Method::POST,
        url("/triggers"),
        Some(json!({
            "name": "a city in a country", "event": "FEATURE_CREATED", "trigger_type": "DML",
            "dataset_id": id, "layer": "cities",
            "predicates": [{"type": "geom", "op": "intersects", "ref_table": format!("{id}/countries")}],
            "actions": [{"action_type": "NOTIFY", "config": {"message": "new city"}}]})),
    )
    .await;
    assert_eq!(status, 201, "{trigger}");

    let cities_table = psql(
        &dsn,
        &format!(
            "SELECT table_name FROM geomill.layers WHERE dataset_id = '{id}' AND name = 'cities'"
        ),
    );
    let (status, answer) = send(
        Method::GET,
        url(&format!("/datasets/{id}/tracking_status")),
        None,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.to_string().contains("cities"), "{answer}");
    let installed = psql(
        &dsn,
        &format!(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'geomill_data.{cities_table}'::regclass AND NOT tgisinternal"
        ),
    );
    assert_ne!(installed, "0", "a row trigger on the cities table");

    let mut cities = connect(address, &format!("?topics=trigger_fired&table={id}.cities")).await;
    let mut countries = connect(
        address,
        &format!("?topics=trigger_fired&table={id}.countries"),
    )
    .await;

    // Paris-ish, inside France: the cities client hears of it within a second.
    psql(
        &dsn,
        &format!(
            "INSERT INTO geomill_data.{cities_table} (name, geom) VALUES ('Newville', ST_SetSRID(ST_MakePoint(2.5, 46.5), 4326))"
        ),
    );
    let event = next_event(&mut cities, Duration::from_secs(1))
        .await
        .expect("trigger_fired within 1 s");
    assert_eq!(event["type"], "trigger_fired", "{event}");
    assert_eq!(event["data"]["trigger_id"], trigger["id"], "{event}");
    assert_eq!(event["data"]["table"], format!("{id}.cities"), "{event}");
    assert_eq!(event["data"]["op"], "INSERT", "{event}");
    assert!(
        next_event(&mut countries, Duration::from_millis(1500))
            .await
            .is_none(),
        "the client filtered on countries hears nothing"
    );

    // In the open Atlantic: nothing fires.
    psql(
        &dsn,
        &format!(
            "INSERT INTO geomill_data.{cities_table} (name, geom) VALUES ('Atlantis', ST_SetSRID(ST_MakePoint(-30, 0), 4326))"
        ),
    );
    assert!(
        next_event(&mut cities, Duration::from_millis(1500))
            .await
            .is_none(),
        "a city outside every country fires nothing"
    );
}
