//! Pipelines as the tests write them: the engines every capability runs on, and a rules file of
//! one step.

use std::borrow::Borrow;

use serde_json::{Value, json};

/// The engines a test server runs with PostGIS (the distributed engine needs a cluster: its
/// tests start one).
pub const ENGINES: [&str; 4] = ["embedded", "postgis", "native", "hybrid"];

/// The step `id`: `capability` with `params`.
pub fn named_step(id: &str, capability: &str, params: impl Borrow<Value>) -> Value {
    json!({"id": id, "capability": capability, "params": params.borrow()})
}

/// A rules file of one step, `s`: `capability` with `params`.
pub fn step(capability: &str, params: impl Borrow<Value>) -> Value {
    json!([named_step("s", capability, params)])
}
