//! Stored rules over the API: writes checked (422 with paths, 409 on a taken name), read,
//! replaced, deleted; graph-editor nodes both ways; the rule evaluation stream.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{call, get, post_json, test_state};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tower::ServiceExt;

fn put_json(uri: &str, body: &Value) -> Request<Body> {
    Request::put(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn rules_are_stored_checked_replaced_and_deleted() {
    let (_dir, state) = test_state();
    let halo = json!({"name": "halo", "capability": "buffer", "config": {"distance": 500, "unit": "meters"}, "scope": "global"});
    let (status, stored) = call(&state, post_json("/rules", &halo)).await;
    assert_eq!(status, StatusCode::CREATED, "{stored}");
    let id = stored["id"].as_str().unwrap().to_owned();
    assert_eq!(stored["config"], halo["config"]);
    assert!(stored["created_at"].is_string());

    // A rule written with params is answered with params.
    let (status, join) = call(
        &state,
        post_json("/rules", &json!({"name": "join", "capability": "spatial_join", "params": {"ref_layer": "countries"}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{join}");
    assert!(
        join.get("params").is_some() && join.get("config").is_none(),
        "{join}"
    );

    let (status, answer) = call(&state, post_json("/rules", &halo)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    let (status, answer) = call(
        &state,
        post_json("/rules", &json!({"name": "bad", "capability": "buffer", "config": {"distance": "far", "unit": "parsecs"}})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    let paths: Vec<&str> = answer["error"]["detail"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert!(
        paths.contains(&"config.distance") && paths.contains(&"config.unit"),
        "{answer}"
    );
    let (status, answer) = call(
        &state,
        post_json(
            "/rules",
            &json!({"name": "x", "capability": "bufer", "config": {}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer.to_string().contains("buffer"),
        "a suggestion: {answer}"
    );

    let (_, listed) = call(&state, get("/rules")).await;
    assert_eq!(listed["total"], 2);

    // Replace: what GET answered may be sent back, changed.
    let (_, mut current) = call(&state, get(&format!("/rules/{id}"))).await;
    current["config"]["distance"] = json!(750);
    let (status, replaced) = call(&state, put_json(&format!("/rules/{id}"), &current)).await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["config"]["distance"], 750);
    assert_eq!(replaced["created_at"], stored["created_at"]);
    current["name"] = json!("join");
    let (status, _) = call(&state, put_json(&format!("/rules/{id}"), &current)).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "the name is taken by the other rule"
    );
    let (_, unchanged) = call(&state, get(&format!("/rules/{id}"))).await;
    assert_eq!(unchanged["name"], "halo");

    let (status, check) = call(
        &state,
        post_json(&format!("/rules/{id}/validate"), &json!({})),
    )
    .await;
    assert_eq!(
        (status, check["valid"].as_bool()),
        (StatusCode::OK, Some(true)),
        "{check}"
    );

    let delete = Request::delete(format!("/rules/{id}"))
        .body(Body::empty())
        .unwrap();
    let (status, answer) = call(&state, delete).await;
    assert_eq!(
        (status, answer["deleted"].as_str()),
        (StatusCode::OK, Some(id.as_str()))
    );
    for request in [
        get(&format!("/rules/{id}")),
        put_json(&format!("/rules/{id}"), &halo),
        Request::delete(format!("/rules/{id}"))
            .body(Body::empty())
            .unwrap(),
    ] {
        let (status, _) = call(&state, request).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    let (status, _) = call(&state, get("/rules/not-a-uuid")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn nodes_round_trip_through_the_api() {
    let (_dir, state) = test_state();
    let rule = json!({"name": "cities_in_countries", "capability": "spatial_join",
        "config": {"input": "cities", "ref_layer": "countries", "predicate": "within", "columns": ["name"]}, "enabled": true});
    let (status, stored) = call(&state, post_json("/rules", &rule)).await;
    assert_eq!(status, StatusCode::CREATED, "{stored}");
    let (status, node) = call(
        &state,
        get(&format!(
            "/rules/{}/to-node",
            stored["id"].as_str().unwrap()
        )),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{node}");
    assert_eq!(node["type"], "spatial_join");
    let ports: Vec<(&str, &Value)> = node["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), &p["value"]))
        .collect();
    assert_eq!(
        ports,
        [
            ("input", &json!("cities")),
            ("ref_layer", &json!("countries"))
        ]
    );
    assert!(
        node["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "how")
    );

    // The node, renamed in the editor, comes back as a new rule equal to the first but for the name.
    let mut edited = node.clone();
    edited["label"] = json!("cities_in_countries_2");
    let (status, created) = call(&state, post_json("/rules/from-node", &edited)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    for key in ["capability", "config", "enabled"] {
        assert_eq!(created[key], rule[key], "{key}");
    }
    let (status, same) = call(&state, post_json("/rules/to-node", &rule)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same["values"], node["values"]);
    let (status, answer) = call(
        &state,
        post_json("/rules/from-node", &json!({"label": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
}

#[tokio::test]
async fn the_evaluation_stream_reports_validations_as_they_happen() {
    let (_dir, state) = test_state();
    let response = geomill::api::app(state.clone())
        .oneshot(get("/rules/eval-stream"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut events = response.into_body().into_data_stream();
    let (status, _) = call(
        &state,
        post_json(
            "/rules/validate",
            &json!([{"name": "far", "capability": "buffer", "config": {"distance": "x"}}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let chunk = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .unwrap()
        .unwrap();
    let text = String::from_utf8(chunk.to_vec()).unwrap();
    let data: Value =
        serde_json::from_str(text.trim().strip_prefix("data:").unwrap().trim()).unwrap();
    assert_eq!(
        (
            data["name"].as_str(),
            data["valid"].as_bool(),
            data["source"].as_str()
        ),
        (Some("far"), Some(false), Some("validate"))
    );
    assert_eq!(data["errors"][0]["path"], "[0].config.distance");
}
