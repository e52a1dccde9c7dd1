//! Rules kept in the catalog: written only when valid (422 with every problem's path), names
//! unique (409), answered in the form they were written (`config` or `params`).

use geomill_backends::store::RuleRecord;
use serde_json::{Map, Value, json};

use super::check;
use crate::error::AppError;
use crate::state::AppState;

/// A rule as the API shows it: the fields as written, plus id and times.
pub fn view(record: &RuleRecord) -> Value {
    let mut rule = Map::new();
    rule.insert("id".into(), json!(record.id));
    rule.insert("name".into(), json!(record.name));
    rule.insert("capability".into(), json!(record.capability));
    rule.insert(
        record.config_key.clone(),
        serde_json::from_str(&record.config).unwrap_or(Value::Null),
    );
    if let Some(scope) = &record.scope {
        rule.insert("scope".into(), json!(scope));
    }
    if let Some(enabled) = record.enabled {
        rule.insert("enabled".into(), json!(enabled));
    }
    rule.insert("created_at".into(), json!(record.created_at));
    rule.insert("updated_at".into(), json!(record.updated_at));
    Value::Object(rule)
}

/// The rule's own fields (what a client writes), without id and times.
pub fn rule_fields(record: &RuleRecord) -> Map<String, Value> {
    let Value::Object(mut rule) = view(record) else {
        return Map::new();
    };
    for generated in ["id", "created_at", "updated_at"] {
        rule.remove(generated);
    }
    rule
}

/// `body` checked as a rule: an object with the Rule fields, valid for its capability. The
/// read-only `created_at` and `updated_at` may come back as they were answered; an `id` must be
/// `id` (the rule written), and is refused on create.
fn checked(
    state: &AppState,
    body: Value,
    id: Option<&str>,
    source: &str,
) -> Result<Map<String, Value>, AppError> {
    let Value::Object(mut rule) = body else {
        return Err(AppError::unprocessable("a rule is a JSON object"));
    };
    rule.remove("created_at");
    rule.remove("updated_at");
    match (rule.remove("id"), id) {
        (None, _) => {}
        (Some(given), Some(id)) if given == id => {}
        (Some(given), Some(id)) => {
            return Err(AppError::unprocessable(format!(
                "id {given} in the body is not the rule written ({id})"
            )));
        }
        (Some(_), None) => {
            return Err(AppError::unprocessable(
                "id is given by the server; leave it out",
            ));
        }
    }
    let problems = check::problems(&rule, "")?;
    check::announce(state, source, &rule, &problems);
    if problems.is_empty() {
        Ok(rule)
    } else {
        Err(AppError::unprocessable(format!(
            "the rule is invalid: {}",
            problems
                .iter()
                .map(|p| format!("{}: {}", p.path, p.message))
                .collect::<Vec<_>>()
                .join("; ")
        ))
        .with_detail(json!({ "errors": problems })))
    }
}

/// The record for a checked rule.
pub(super) fn record(id: String, rule: &Map<String, Value>, created_at: String) -> RuleRecord {
    let config_key = if rule.contains_key("config") || !rule.contains_key("params") {
        "config"
    } else {
        "params"
    };
    let config = rule
        .get(config_key)
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let text = |key: &str| rule.get(key).and_then(Value::as_str).map(str::to_owned);
    RuleRecord {
        id,
        name: text("name").unwrap_or_default(),
        capability: text("capability").unwrap_or_default(),
        config: config.to_string(),
        config_key: config_key.to_owned(),
        scope: text("scope"),
        enabled: rule.get("enabled").and_then(Value::as_bool),
        created_at,
        updated_at: crate::timestamp::now(),
    }
}

pub async fn create(state: &AppState, body: Value) -> Result<RuleRecord, AppError> {
    let rule = checked(state, body, None, "create")?;
    let now = crate::timestamp::now();
    state
        .rules()
        .put_unique(record(uuid::Uuid::new_v4().to_string(), &rule, now))
        .await
}

pub async fn replace(state: &AppState, id: &str, body: Value) -> Result<RuleRecord, AppError> {
    let existing = state.rules().find(id).await?;
    let rule = checked(state, body, Some(id), "update")?;
    state
        .rules()
        .put_unique(record(existing.id, &rule, existing.created_at))
        .await
}
