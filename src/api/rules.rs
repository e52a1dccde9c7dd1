//! `/rules/validate`: a dry run of rules (capability, parameters against the JSON Schema, types).

use axum::Json;
use axum::Router;
use axum::routing::post;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::{PlanError, plan_document};
use serde_json::{Value, json};

use super::extract::ApiJson;
use super::planning::prefixed;
use crate::error::ApiError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route("/rules/validate", post(validate))
}

/// Validates each rule on its own; answers 200 with `valid` and every problem found.
#[utoipa::path(post, path = "/rules/validate", tag = "rules",
    request_body(content = Object, description = "An array of rules: {name?, capability, config | params}"),
    responses(
        (status = 200, description = "{valid, results: [{index, name, capability, valid, errors: [{path, message}]}], errors}", body = Object),
        (status = 422, description = "The body is not an array of objects", body = crate::error::ErrorBody),
    ))]
pub async fn validate(ApiJson(body): ApiJson<Value>) -> Result<Json<Value>, ApiError> {
    let Value::Array(rules) = body else {
        return Err(ApiError::unprocessable("expected an array of rules"));
    };
    let mut results = Vec::new();
    let mut all_errors = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        let Value::Object(object) = rule else {
            return Err(ApiError::unprocessable(format!(
                "[{index}]: expected an object"
            )));
        };
        let mut rule = object.clone();
        let name = rule
            .entry("name")
            .or_insert_with(|| Value::String(format!("rule_{index}")))
            .clone();
        let written_as_params = rule.contains_key("params") && !rule.contains_key("config");
        let outcome = plan_document(&Value::Object(rule), &Catalog::default(), &Vars::default());
        let errors = match outcome {
            Ok(_) => Vec::new(),
            Err(PlanError::Invalid(problems)) => {
                let mut problems = prefixed(&problems, &format!("[{index}]."));
                if written_as_params {
                    for problem in &mut problems {
                        problem.path = problem.path.replacen(".config", ".params", 1);
                    }
                }
                problems
            }
            Err(other) => return Err(ApiError::internal(&other)),
        };
        all_errors.extend(errors.iter().cloned());
        results.push(json!({
            "index": index,
            "name": name,
            "capability": object.get("capability"),
            "valid": errors.is_empty(),
            "errors": errors,
        }));
    }
    Ok(Json(
        json!({ "valid": all_errors.is_empty(), "results": results, "errors": all_errors }),
    ))
}
