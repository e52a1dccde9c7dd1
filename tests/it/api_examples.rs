//! Example datasets on the real server: the files of GEOMILL_EXAMPLES_DIR listed and detailed,
//! previewed, tiled, kept out of `/datasets` and read-only, and a trigger dry run over an
//! example's features that stores nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::http::HttpApi;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A folder holding the Natural Earth countries Shapefile set and the world GeoPackage.
fn examples_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for ext in ["shp", "shx", "dbf", "prj", "cpg"] {
        let name = format!("naturalearth_lowres.{ext}");
        std::fs::copy(
            common::shared(&format!("naturalearth_lowres/{name}")),
            dir.path().join(&name),
        )
        .expect("copy");
    }
    common::world_gpkg(dir.path());
    std::fs::write(dir.path().join("README.txt"), "not an example").expect("write");
    dir
}

#[tokio::test]
async fn no_folder_means_no_examples() {
    let api = HttpApi::start(&[]);
    let (status, body) = api.get("/examples").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"examples": []}));
}

#[tokio::test]
async fn examples_are_listed_previewed_tiled_and_read_only() {
    let folder = examples_dir();
    let folder_text = folder.path().display().to_string();
    let api = HttpApi::start(&[("GEOMILL_EXAMPLES_DIR", &folder_text)]);

    let (status, list) = api.get("/examples").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let ids: Vec<&str> = list["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["naturalearth_lowres", "world"], "{list}");

    let (status, world) = api.get("/examples/world").await;
    assert_eq!(status, StatusCode::OK, "{world}");
    assert_eq!(world["file"], "world.gpkg");
    assert_eq!(world["read_only"], true);
    let layers: Vec<&str> = world["dataset"]["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(
        layers.contains(&"countries") && layers.contains(&"cities"),
        "{world}"
    );
    let world_id = world["dataset"]["id"].as_str().unwrap().to_owned();

    let (status, missing) = api.get("/examples/atlantis").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");

    // Preview: the first features as GeoJSON, the layer's total beside them.
    let (status, preview) = api
        .get("/examples/naturalearth_lowres/preview?limit=5")
        .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["type"], "FeatureCollection");
    assert_eq!(preview["features"].as_array().unwrap().len(), 5);
    assert_eq!(preview["total"], 177);
    assert!(
        preview["features"][0]["geometry"]["type"].is_string(),
        "{preview}"
    );
    let (status, cities) = api
        .get("/examples/world/preview?layer=cities&limit=2")
        .await;
    assert_eq!(status, StatusCode::OK, "{cities}");
    assert_eq!(cities["layer"], "cities");
    assert_eq!(cities["features"][0]["geometry"]["type"], "Point");
    let (status, body) = api.get("/examples/world/preview?limit=5000").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = api.get("/examples/world/preview?layer=rivers").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // Tiles: the whole world at zoom 0 holds every country; indexes outside the matrix are 400.
    let response = reqwest::get(
        api.server
            .url("/examples/naturalearth_lowres/tiles/0/0/0.mvt"),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/vnd.mapbox-vector-tile"
    );
    let tile = response.bytes().await.unwrap();
    assert!(tile.len() > 1000, "a world tile of {} bytes", tile.len());
    for bad in ["1/2/0.mvt", "0/0/x.mvt", "0/0/0.png", "40/0/0.mvt"] {
        let (status, body) = api
            .get(&format!("/examples/naturalearth_lowres/tiles/{bad}"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, _) = api.get("/examples/atlantis/tiles/0/0/0.mvt").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Examples stay out of /datasets and cannot be renamed or deleted.
    let (status, datasets) = api.get("/datasets").await;
    assert_eq!(status, StatusCode::OK, "{datasets}");
    assert_eq!(datasets["total"], 0, "{datasets}");
    let (status, body) = api
        .delete(&format!("/api/portal/datasets/{world_id}"))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "read_only");
    let renamed = api
        .client
        .patch(api.server.url(&format!("/datasets/{world_id}")))
        .json(&json!({"name": "mine now"}))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), StatusCode::CONFLICT);
    let (status, world_again) = api.get("/examples/world").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(world_again["dataset"]["name"], "world");
}

fn countries_with_cities(reference: &str) -> Value {
    json!({"name": "countries with a city", "event": "FEATURE_CREATED", "trigger_type": "DML",
           "predicates": [{"type": "geom", "op": "intersects", "ref_table": reference}],
           "actions": [{"action_type": "NOTIFY", "config": {"message": "a country with a city"}}]})
}

#[tokio::test]
async fn a_trigger_dry_run_evaluates_every_feature_and_stores_nothing() {
    let folder = examples_dir();
    let folder_text = folder.path().display().to_string();
    let api = HttpApi::start(&[("GEOMILL_EXAMPLES_DIR", &folder_text)]);
    let (_, world) = api.get("/examples/world").await;
    let world_id = world["dataset"]["id"].as_str().unwrap().to_owned();

    // Countries that hold a city of the other example: most, not all (Antarctica holds none).
    let trigger = countries_with_cities(&format!("{world_id}/cities"));
    let (status, run) = api
        .post("/examples/naturalearth_lowres/triggers/dryrun", &trigger)
        .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["example"], "naturalearth_lowres");
    assert_eq!(run["layer"], "naturalearth_lowres");
    assert_eq!(run["total"], 177);
    assert_eq!(run["rows"].as_array().unwrap().len(), 177);
    let matched = run["matched_count"].as_u64().unwrap();
    assert!(matched > 100 && matched < 177, "{matched} of 177 countries");
    assert_eq!(run["matched"].as_array().unwrap().len() as u64, matched);
    assert_eq!(run["would_fire"], true);
    let actions = run["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{run}");

    // A disabled trigger on another layer: every city passes, nothing would fire.
    let (status, run) = api
        .post(
            "/examples/world/triggers/dryrun",
            &json!({"name": "cities in countries", "event": "DATA_CHANGED", "trigger_type": "DML",
                    "layer": "cities", "predicates": [], "enabled": false,
                    "actions": [{"action_type": "NOTIFY", "config": {"message": "a city"}}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["layer"], "cities");
    assert_eq!(run["matched_count"], run["total"]);
    assert_eq!(run["would_fire"], false);
    assert_eq!(run["actions"], json!([]));

    // Nothing was stored.
    let (status, triggers) = api.get("/triggers").await;
    assert_eq!(status, StatusCode::OK, "{triggers}");
    assert_eq!(triggers["triggers"], json!([]), "{triggers}");

    // A bad trigger body is a 422 naming the field; an unknown example a 404.
    let mut bad = trigger.clone();
    bad["event"] = json!("SOMETIMES");
    let (status, body) = api
        .post("/examples/naturalearth_lowres/triggers/dryrun", &bad)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("event"),
        "{body}"
    );
    let (status, body) = api
        .post(
            "/examples/naturalearth_lowres/triggers/dryrun",
            &json!(["not", "a", "trigger"]),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = api
        .post("/examples/atlantis/triggers/dryrun", &trigger)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}
