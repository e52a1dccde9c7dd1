//! Checking one rule (capability, parameters against its JSON Schema, types, scope) and
//! announcing the evaluation to `/rules/eval-stream` subscribers.

use geomill_planner::Problem;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::{PlanError, plan_document};
use serde_json::{Map, Value, json};

use crate::error::AppError;
use crate::state::AppState;

/// Every problem of `rule`, with paths under `prefix` (`[0].`, or empty) and in the name the
/// rule used for its parameters (`config` or `params`).
pub fn problems(rule: &Map<String, Value>, prefix: &str) -> Result<Vec<Problem>, AppError> {
    let written_as_params = rule.contains_key("params") && !rule.contains_key("config");
    let mut rule = rule.clone();
    rule.entry("name")
        .or_insert_with(|| Value::String("rule".into()));
    match plan_document(&Value::Object(rule), &Catalog::default(), &Vars::default()) {
        Ok(_) => Ok(Vec::new()),
        Err(PlanError::Invalid(problems)) => {
            let mut problems = prefixed(&problems, prefix);
            if written_as_params {
                for problem in &mut problems {
                    problem.path = problem.path.replacen("config", "params", 1);
                }
            }
            Ok(problems)
        }
        Err(other) => Err(AppError::internal(&other)),
    }
}

/// Tells `/rules/eval-stream` subscribers that `rule` was evaluated, by what, and the outcome.
pub fn announce(state: &AppState, source: &str, rule: &Map<String, Value>, problems: &[Problem]) {
    let event = json!({
        "timestamp": crate::timestamp::now(),
        "source": source,
        "rule_id": rule.get("id"),
        "name": rule.get("name"),
        "capability": rule.get("capability"),
        "valid": problems.is_empty(),
        "errors": problems,
    });
    // Nobody listening is not an error.
    let _ = state.rule_events().send(event);
}

/// Problems with their paths prefixed (`[2].` for the third rule of a batch).
pub fn prefixed(problems: &[Problem], prefix: &str) -> Vec<Problem> {
    problems
        .iter()
        .map(|p| Problem::new(format!("{prefix}{}", p.path), p.message.clone()))
        .collect()
}
