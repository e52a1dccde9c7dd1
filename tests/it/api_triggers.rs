//! Triggers on the embedded engine: writes checked field by field (422 naming the field), CRUD,
//! toggle, operations checked against the capability registry, dry-run tests and evaluations
//! against real layers, the evaluation stream, and change tracking of a dataset's layers with
//! a trigger firing on the WebSocket bus when a tracked layer's rows are deleted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::time::Duration;

use common::live::{connect, next_event, send, serve, upload_world};
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};

fn notify_trigger(dataset: &str, reference: &str) -> Value {
    json!({"name": "countries with cities", "event": "DATA_CHANGED", "trigger_type": "DML",
           "dataset_id": dataset, "layer": "countries",
           "predicates": [{"type": "geom", "op": "intersects", "ref_table": reference}],
           "actions": [{"action_type": "NOTIFY", "config": {"message": "a country changed"}}]})
}

/// A 422 whose `detail.errors` names `path`.
fn assert_names_field(status: u16, answer: &Value, path: &str, context: &Value) {
    assert_eq!(status, 422, "{context}: {answer}");
    let errors = answer["error"]["detail"]["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["path"] == path),
        "{context}: expected a problem at {path}: {answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triggers_are_checked_stored_toggled_and_given_operations() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let dataset = upload_world(address, dir.path()).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = |path: &str| format!("http://{address}{path}");
    let reference = format!("{dataset}/cities");

    let (status, created) = send(
        Method::POST,
        url("/triggers"),
        Some(notify_trigger(&dataset, &reference)),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["table"], format!("{dataset}.countries"));
    assert_eq!(created["trigger_type"], "DML");
    assert_eq!(created["enabled"], true);
    let id = created["id"].as_str().unwrap().to_owned();

    // Every refusal is a 422 naming the field.
    let mut bad_event = notify_trigger(&dataset, &reference);
    bad_event["event"] = json!("ROW_TOUCHED");
    let mut bad_predicate = notify_trigger(&dataset, &reference);
    bad_predicate["predicates"][0]["op"] = json!("contains");
    let mut bad_reference = notify_trigger(&dataset, &reference);
    bad_reference["predicates"][0]["ref_table"] = json!("nowhere/nothing");
    let mut bad_action = notify_trigger(&dataset, &reference);
    bad_action["actions"][0]["action_type"] = json!("EMAIL");
    let mut bad_webhook = notify_trigger(&dataset, &reference);
    bad_webhook["actions"][0]["config"]["webhook"] = json!("ftp://example.org/x");
    let mut bad_layer = notify_trigger(&dataset, &reference);
    bad_layer["layer"] = json!("rivers");
    let mut no_target = notify_trigger(&dataset, &reference);
    no_target.as_object_mut().unwrap().remove("dataset_id");
    no_target.as_object_mut().unwrap().remove("layer");
    let mut bad_job = notify_trigger(&dataset, &reference);
    bad_job["actions"] =
        json!([{"action_type": "RUN_PIPELINE", "config": {"pipeline_id": "no-such-rule"}}]);
    let mut unknown_field = notify_trigger(&dataset, &reference);
    unknown_field["colour"] = json!("red");
    for (body, path) in [
        (bad_event, "event"),
        (bad_predicate, "predicates[0].op"),
        (bad_reference, "predicates[0].ref_table"),
        (bad_action, "actions[0].action_type"),
        (bad_webhook, "actions[0].config.webhook"),
        (bad_layer, "layer"),
        (no_target, "dataset_id"),
        (bad_job, "actions[0].config"),
        (unknown_field, "colour"),
        (json!({"event": "FEATURE_CREATED"}), "name"),
    ] {
        let (status, answer) = send(Method::POST, url("/triggers"), Some(body.clone())).await;
        assert_names_field(status, &answer, path, &body);
        // Validation answers the same problems as data.
        let (status, checked) =
            send(Method::POST, url("/triggers/validate"), Some(body.clone())).await;
        assert_eq!(
            (status, &checked["valid"]),
            (200, &json!(false)),
            "{checked}"
        );
        assert!(
            checked["errors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["path"] == path),
            "{checked}"
        );
    }
    let (status, checked) = send(
        Method::POST,
        url("/triggers/validate"),
        Some(notify_trigger(&dataset, &reference)),
    )
    .await;
    assert_eq!(
        (status, &checked["valid"]),
        (200, &json!(true)),
        "{checked}"
    );
    let (_, listed) = send(Method::GET, url("/triggers"), None).await;
    assert_eq!(
        listed["total"], 1,
        "refused triggers are not stored: {listed}"
    );

    // Toggle, replace, read; unknown ids are 404s.
    let (status, toggled) = send(Method::POST, url(&format!("/triggers/{id}/toggle")), None).await;
    assert_eq!((status, &toggled["enabled"]), (200, &json!(false)));
    let mut renamed = notify_trigger(&dataset, &reference);
    renamed["name"] = json!("renamed");
    renamed["event"] = json!("FEATURE_CREATED");
    let (status, replaced) =
        send(Method::PUT, url(&format!("/triggers/{id}")), Some(renamed)).await;
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(
        (&replaced["name"], &replaced["event"]),
        (&json!("renamed"), &json!("FEATURE_CREATED"))
    );
    assert_eq!(replaced["created_at"], created["created_at"]);
    for (method, path) in [
        (Method::GET, "/triggers/nope"),
        (Method::DELETE, "/triggers/nope"),
        (Method::POST, "/triggers/nope/toggle"),
        (Method::GET, "/triggers/nope/operations"),
    ] {
        let (status, _) = send(method.clone(), url(path), None).await;
        assert_eq!(status, 404, "{method} {path}");
    }

    // Operations: checked against the capability registry, kept in order.
    let ops = url(&format!("/triggers/{id}/operations"));
    let (status, second) = send(Method::POST, ops.clone(), Some(json!({"operation_type": "BEFORE", "capability": "buffer", "params": {"distance": 10, "unit": "meters"}, "order": 2}))).await;
    assert_eq!(status, 201, "{second}");
    let (status, first) = send(
        Method::POST,
        ops.clone(),
        Some(json!({"capability": "centroid", "params": {}, "order": 1})),
    )
    .await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["operation_type"], "BEFORE");
    for (body, path) in [
        (json!({"capability": "bufer", "params": {}}), "capability"),
        (
            json!({"capability": "buffer", "params": {"distance": "far"}}),
            "params.distance",
        ),
        (
            json!({"operation_type": "AFTER", "capability": "centroid"}),
            "operation_type",
        ),
        (json!({"capability": "centroid", "order": "first"}), "order"),
    ] {
        let (status, answer) = send(Method::POST, ops.clone(), Some(body.clone())).await;
        assert_eq!(status, 422, "{body}: {answer}");
        let errors = answer["error"]["detail"]["errors"].as_array().unwrap();
        assert!(
            errors
                .iter()
                .any(|e| e["path"].as_str().unwrap().contains(path)),
            "{body}: {answer}"
        );
    }
    let (_, listed) = send(Method::GET, ops.clone(), None).await;
    let order: Vec<&Value> = listed["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["capability"])
        .collect();
    assert_eq!(order, [&json!("centroid"), &json!("buffer")], "{listed}");
    let op_id = second["id"].as_str().unwrap();
    let (status, changed) = send(
        Method::PUT,
        format!("{ops}/{op_id}"),
        Some(json!({"capability": "buffer", "params": {"distance": 5}, "order": 0})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    let (_, listed) = send(Method::GET, ops.clone(), None).await;
    assert_eq!(listed["operations"][0]["id"], op_id, "{listed}");
    let (status, _) = send(Method::DELETE, format!("{ops}/{op_id}"), None).await;
    assert_eq!(status, 200);
    let (status, _) = send(Method::DELETE, format!("{ops}/{op_id}"), None).await;
    assert_eq!(status, 404);
    let (_, listed) = send(Method::GET, ops.clone(), None).await;
    assert_eq!(listed["operations"].as_array().unwrap().len(), 1);

    let (status, _) = send(Method::DELETE, url(&format!("/triggers/{id}")), None).await;
    assert_eq!(status, 200);
    let (status, _) = send(Method::GET, url(&format!("/triggers/{id}")), None).await;
    assert_eq!(status, 404);
}

/// The next `data:` of an SSE response, as JSON.
async fn next_sse(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    buffer: &mut String,
) -> Value {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                return serde_json::from_str(data.trim()).unwrap();
            }
            continue;
        }
        let chunk = tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tests_and_evaluations_use_real_layers_and_are_streamed() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let dataset = upload_world(address, dir.path()).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = |path: &str| format!("http://{address}{path}");
    let mut trigger = notify_trigger(&dataset, &format!("{dataset}/countries"));
    trigger["actions"][0]["config"]["webhook"] = json!("https://hooks.example.org/geomill");
    let (_, created) = send(Method::POST, url("/triggers"), Some(trigger)).await;
    let id = created["id"].as_str().unwrap().to_owned();

    let response = reqwest::get(url("/triggers/eval-stream")).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();

    // Paris is in a country, the middle of the Atlantic in none.
    let paris = json!({"type": "Point", "coordinates": [2.35, 48.85]});
    let ocean = json!({"type": "Point", "coordinates": [-30.0, 30.0]});
    let (status, tested) = send(
        Method::POST,
        url("/triggers/test"),
        Some(json!({"trigger_id": id, "op": "UPDATE", "geometry": paris})),
    )
    .await;
    assert_eq!(status, 200, "{tested}");
    assert_eq!(tested["would_fire"], true, "{tested}");
    let action = &tested["actions"][0];
    assert_eq!(action["would_publish"]["type"], "trigger_fired", "{tested}");
    assert_eq!(
        action["would_publish"]["data"]["message"],
        "a country changed"
    );
    assert_eq!(action["webhook"], "https://hooks.example.org/geomill");
    assert_eq!(action["signed"], false);
    let streamed = next_sse(&mut stream, &mut buffer).await;
    assert_eq!(
        (&streamed["source"], &streamed["would_fire"]),
        (&json!("test"), &json!(true)),
        "{streamed}"
    );
    let (_, tested) = send(
        Method::POST,
        url("/triggers/test"),
        Some(json!({"trigger_id": id, "geometry": ocean})),
    )
    .await;
    assert_eq!(tested["would_fire"], false, "{tested}");
    assert_eq!(tested["actions"], json!([]));

    let (status, evaluated) = send(
        Method::POST,
        url("/triggers/evaluate"),
        Some(json!({"trigger_id": id, "features": [
            {"type": "Feature", "id": "paris", "geometry": paris, "properties": {}},
            {"type": "Feature", "id": "ocean", "geometry": ocean, "properties": {}},
        ]})),
    )
    .await;
    assert_eq!(status, 200, "{evaluated}");
    assert_eq!(evaluated["matched"], json!(["paris"]), "{evaluated}");
    let streamed = next_sse(&mut stream, &mut buffer).await;
    let streamed = if streamed["source"] == "test" {
        next_sse(&mut stream, &mut buffer).await
    } else {
        streamed
    };
    assert_eq!(streamed["source"], "evaluate", "{streamed}");

    // The rows of a layer: every city lies in or on a country, or not; the answer counts them.
    let (status, evaluated) = send(
        Method::POST,
        url("/triggers/evaluate"),
        Some(json!({"trigger_id": id, "dataset_id": dataset, "layer": "cities"})),
    )
    .await;
    assert_eq!(status, 200, "{evaluated}");
    let total = evaluated["total"].as_u64().unwrap();
    let matched = evaluated["matched_count"].as_u64().unwrap();
    assert!(total > 0 && matched > 0 && matched <= total, "{evaluated}");

    for body in [json!({"trigger_id": "nope", "geometry": paris})] {
        let (status, _) = send(Method::POST, url("/triggers/evaluate"), Some(body)).await;
        assert_eq!(status, 404);
    }
    // Without data, a test says what the actions would do; an evaluation needs data.
    let (status, tested) = send(
        Method::POST,
        url("/triggers/test"),
        Some(json!({"trigger_id": id})),
    )
    .await;
    assert_eq!(
        (
            status,
            &tested["would_fire"],
            &tested["predicates_evaluated"]
        ),
        (200, &json!(true), &json!(false)),
        "{tested}"
    );
    for (path, body) in [
        ("/triggers/evaluate", json!({"trigger_id": id})),
        (
            "/triggers/evaluate",
            json!({"trigger_id": id, "geometry": {"type": "Pointy"}}),
        ),
        (
            "/triggers/test",
            json!({"trigger_id": id, "geometry": {"type": "Pointy"}}),
        ),
        (
            "/triggers/test",
            json!({"trigger_id": id, "op": "MERGE", "geometry": paris}),
        ),
        ("/triggers/test", json!({"geometry": paris})),
    ] {
        let (status, answer) = send(Method::POST, url(path), Some(body.clone())).await;
        assert_eq!(status, 422, "{path} {body}: {answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracked_layers_fire_their_triggers() {
    let (dir, state) = common::test_state();
    let address = serve(&state).await;
    let watched = upload_world(address, dir.path()).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let reference = upload_world(address, dir.path()).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = |path: &str| format!("http://{address}{path}");

    // Tracking, one layer at a time.
    let (status, tracked) = send(
        Method::POST,
        url(&format!("/datasets/{watched}/enable_tracking")),
        Some(json!({"layer": "countries"})),
    )
    .await;
    assert_eq!(status, 200, "{tracked}");
    assert_eq!(
        tracked["layers"][0]["table"],
        format!("{watched}.countries")
    );
    assert_eq!(tracked["layers"][0]["pending"], 0);
    let (status, _) = send(
        Method::POST,
        url(&format!("/datasets/{watched}/enable_tracking")),
        Some(json!({"layer": "rivers"})),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = send(
        Method::POST,
        url(&format!("/datasets/{watched}/disable_tracking")),
        Some(json!({"layer": "cities"})),
    )
    .await;
    assert_eq!(status, 404, "cities is not tracked");
    let (status, _) = send(
        Method::POST,
        url(&format!("/datasets/{watched}/enable_tracking")),
        Some(json!({"layer": "cities"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, untracked) = send(
        Method::POST,
        url(&format!("/datasets/{watched}/disable_tracking")),
        Some(json!({"layer": "cities"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        untracked["layers"].as_array().unwrap().len(),
        1,
        "{untracked}"
    );
    let (status, current) = send(
        Method::GET,
        url(&format!("/datasets/{watched}/tracking_status")),
        None,
    )
    .await;
    assert_eq!((status, &current), (200, &untracked));
    let (status, _) = send(
        Method::GET,
        url("/datasets/00000000-0000-4000-8000-000000000000/tracking_status"),
        None,
    )
    .await;
    assert_eq!(status, 404);

    let (_, trigger) = send(
        Method::POST,
        url("/triggers"),
        Some(notify_trigger(&watched, &format!("{reference}/cities"))),
    )
    .await;
    let trigger_id = trigger["id"].as_str().unwrap().to_owned();
    let table = format!("{watched}.countries");
    let mut fired = connect(address, &format!("?topics=trigger_fired&table={table}")).await;
    let mut other = connect(
        address,
        &format!("?topics=trigger_fired,layer_updated&table={reference}.countries"),
    )
    .await;
    let mut updates = connect(address, &format!("?topics=layer_updated&table={table}")).await;

    // Deleting the watched dataset deletes every row of the tracked layer: the countries with
    // a city of the reference layer fire the trigger.
    let (status, _) = send(
        Method::DELETE,
        url(&format!("/api/portal/datasets/{watched}")),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let update = next_event(&mut updates, Duration::from_secs(30))
        .await
        .expect("layer_updated");
    assert_eq!(
        (&update["data"]["op"], &update["data"]["table"]),
        (&json!("DELETE"), &json!(table)),
        "{update}"
    );
    let event = next_event(&mut fired, Duration::from_secs(30))
        .await
        .expect("trigger_fired");
    assert_eq!(event["type"], "trigger_fired");
    let data = &event["data"];
    assert_eq!(
        (&data["trigger_id"], &data["table"], &data["op"]),
        (&json!(trigger_id), &json!(table), &json!("DELETE")),
        "{event}"
    );
    assert_eq!(data["event"], "DATA_CHANGED");
    assert_eq!(data["message"], "a country changed");
    let fids = data["fids"].as_array().unwrap();
    assert_eq!(data["count"], fids.len(), "{event}");
    assert!(
        !fids.is_empty() && fids.len() < 177,
        "only countries with a city: {event}"
    );

    // A client filtered on another table received nothing: the next thing it sees is a change
    // of that table.
    let (_, _) = send(
        Method::POST,
        url(&format!("/datasets/{reference}/enable_tracking")),
        Some(json!({"layer": "countries"})),
    )
    .await;
    let (status, _) = send(
        Method::DELETE,
        url(&format!("/api/portal/datasets/{reference}")),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let seen = next_event(&mut other, Duration::from_secs(30))
        .await
        .expect("layer_updated");
    assert_eq!(
        (&seen["type"], &seen["data"]["table"]),
        (
            &json!("layer_updated"),
            &json!(format!("{reference}.countries"))
        ),
        "{seen}"
    );
}
