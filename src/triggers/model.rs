//! The trigger model: what a trigger watches, when it fires (event, predicates), what it does
//! (actions), the operations attached to it, and the checks every write goes through. Every
//! problem is reported with the path of its field.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// `FEATURE_CREATED` (inserts) or `DATA_CHANGED` (inserts, updates and deletes).
pub const EVENTS: &[&str] = &["FEATURE_CREATED", "DATA_CHANGED"];
/// What an action does.
pub const ACTION_TYPES: &[&str] = &["NOTIFY", "RUN_PIPELINE"];
/// When an operation runs.
pub const OPERATION_TYPES: &[&str] = &["BEFORE"];

/// A geometric condition on each changed row: its geometry `op` a feature of `ref_table`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Predicate {
    /// `geom`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `intersects`.
    pub op: String,
    /// A stored layer (`<dataset id or name>/<layer>`, a dataset id or name) or, with
    /// PostGIS configured, a PostgreSQL table `schema.table`.
    pub ref_table: String,
}

/// What a firing does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Action {
    /// `NOTIFY` or `RUN_PIPELINE`.
    pub action_type: String,
    /// NOTIFY: `message`, `webhook` (URL), `secret` (write-only: answers show `***`; sending
    /// `***` back or leaving it out keeps the stored one, `null` removes it); RUN_PIPELINE:
    /// `job` (a `POST /jobs` body), or `pipeline_id` (a stored rule) with `dataset_id`.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: Map<String, Value>,
}

/// An operation attached to a trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Operation {
    pub id: String,
    /// `BEFORE`.
    pub operation_type: String,
    /// A capability of the registry (`GET /capabilities`).
    pub capability: String,
    /// Its parameters, checked against the capability's JSON Schema.
    #[schema(value_type = Object)]
    pub params: Map<String, Value>,
    /// Position among the trigger's operations (ascending).
    pub order: i64,
}

/// A trigger's fields, as written and stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TriggerSpec {
    pub name: String,
    /// `FEATURE_CREATED` or `DATA_CHANGED`.
    pub event: String,
    /// `DML`.
    pub trigger_type: String,
    pub predicates: Vec<Predicate>,
    pub actions: Vec<Action>,
    /// Older form: a stored rule run on the watched dataset when the trigger fires.
    pub rule_id: Option<String>,
    pub enabled: bool,
    /// The watched dataset and layer (the layer defaults to the dataset's first).
    pub dataset_id: Option<String>,
    pub layer: Option<String>,
    /// The watched table as events name it: `<dataset id>.<layer>` for a dataset layer, or a
    /// PostgreSQL `schema.table`.
    pub table: String,
    #[serde(default)]
    pub operations: Vec<Operation>,
}

pub use geomill_planner::Problem as FieldProblem;

fn problem(path: impl Into<String>, message: impl Into<String>) -> FieldProblem {
    FieldProblem::new(path, message)
}

/// Fields a trigger body may carry; the read-only ones a read answered with are accepted back.
const FIELDS: &[&str] = &[
    "name",
    "event",
    "trigger_type",
    "predicates",
    "actions",
    "rule_id",
    "enabled",
    "dataset_id",
    "layer",
    "table",
    "operations",
    "id",
    "created_at",
    "updated_at",
];

fn text<'a>(
    body: &'a Map<String, Value>,
    key: &str,
    problems: &mut Vec<FieldProblem>,
) -> Option<&'a str> {
    match body.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(other) => {
            problems.push(problem(key, format!("expected a string, got {other}")));
            None
        }
    }
}

fn one_of(value: &str, allowed: &[&str], path: &str, problems: &mut Vec<FieldProblem>) {
    if !allowed.contains(&value) {
        problems.push(problem(
            path,
            format!("{value:?} is not one of {}", allowed.join(", ")),
        ));
    }
}

fn predicates(value: Option<&Value>, problems: &mut Vec<FieldProblem>) -> Vec<Predicate> {
    let items = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            problems.push(problem(
                "predicates",
                format!("expected an array, got {other}"),
            ));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("predicates[{i}]");
        let Some(object) = item.as_object() else {
            problems.push(problem(path, "expected an object {type, op, ref_table}"));
            continue;
        };
        let field = |key: &str, problems: &mut Vec<FieldProblem>| match object.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            _ => {
                problems.push(problem(
                    format!("{path}.{key}"),
                    "a non-empty string is required",
                ));
                None
            }
        };
        let (kind, op, reference) = (
            field("type", problems),
            field("op", problems),
            field("ref_table", problems),
        );
        if let Some(kind) = &kind {
            one_of(kind, &["geom"], &format!("{path}.type"), problems);
        }
        if let Some(op) = &op {
            one_of(op, &["intersects"], &format!("{path}.op"), problems);
        }
        for key in object.keys() {
            if !["type", "op", "ref_table"].contains(&key.as_str()) {
                problems.push(problem(format!("{path}.{key}"), "unknown field"));
            }
        }
        if let (Some(kind), Some(op), Some(ref_table)) = (kind, op, reference) {
            out.push(Predicate {
                kind,
                op,
                ref_table,
            });
        }
    }
    out
}

fn action_config(
    kind: &str,
    config: &Map<String, Value>,
    path: &str,
    problems: &mut Vec<FieldProblem>,
) {
    match kind {
        "NOTIFY" => {
            if config.get("message").is_some_and(|v| !v.is_string()) {
                problems.push(problem(
                    format!("{path}.config.message"),
                    "expected a string",
                ));
            }
            // null removes a stored secret (see `super::secrets`).
            if config
                .get("secret")
                .is_some_and(|v| !v.is_string() && !v.is_null())
            {
                problems.push(problem(
                    format!("{path}.config.secret"),
                    "expected a string (or null to remove the stored one)",
                ));
            }
            match config.get("webhook") {
                None | Some(Value::Null) => {}
                Some(Value::String(url)) => match reqwest::Url::parse(url) {
                    Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
                    _ => problems.push(problem(
                        format!("{path}.config.webhook"),
                        format!("{url:?} is not an http or https URL"),
                    )),
                },
                Some(_) => problems.push(problem(
                    format!("{path}.config.webhook"),
                    "expected a URL string",
                )),
            }
        }
        "RUN_PIPELINE" => {
            let forms = [
                config.contains_key("job"),
                config.contains_key("pipeline_id"),
            ];
            if forms.iter().filter(|f| **f).count() != 1 {
                problems.push(problem(
                    format!("{path}.config"),
                    "give exactly one of job (a POST /jobs body) or pipeline_id (a stored rule, with dataset_id)",
                ));
            }
        }
        _ => {}
    }
}

fn actions(value: Option<&Value>, problems: &mut Vec<FieldProblem>) -> Vec<Action> {
    let items = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            problems.push(problem(
                "actions",
                format!("expected an array, got {other}"),
            ));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("actions[{i}]");
        let Some(object) = item.as_object() else {
            problems.push(problem(path, "expected an object {action_type, config}"));
            continue;
        };
        let Some(kind) = object.get("action_type").and_then(Value::as_str) else {
            problems.push(problem(
                format!("{path}.action_type"),
                "a string is required",
            ));
            continue;
        };
        one_of(kind, ACTION_TYPES, &format!("{path}.action_type"), problems);
        let config = match object.get("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(config)) => config.clone(),
            Some(_) => {
                problems.push(problem(format!("{path}.config"), "expected an object"));
                continue;
            }
        };
        action_config(kind, &config, &path, problems);
        out.push(Action {
            action_type: kind.to_owned(),
            config,
        });
    }
    out
}

/// What the body says is watched: `(dataset_id, layer, table)` before the dataset is looked up.
pub type Watched = (Option<String>, Option<String>, Option<String>);

/// The trigger a body describes, or every problem of it. The watched table and the references
/// are checked against the catalog afterwards (see `super::store::resolve`); `table` is filled
/// in then.
pub fn parse(body: &Value) -> Result<(TriggerSpec, Watched), Vec<FieldProblem>> {
    let Some(body) = body.as_object() else {
        return Err(vec![problem("", "expected a JSON object (a Trigger)")]);
    };
    let mut problems = Vec::new();
    for key in body.keys() {
        if !FIELDS.contains(&key.as_str()) {
            problems.push(problem(key.clone(), "unknown field"));
        }
    }
    let name = text(body, "name", &mut problems)
        .map(str::trim)
        .unwrap_or_default();
    if name.is_empty() || name.len() > 200 {
        problems.push(problem("name", "a name of 1 to 200 characters is required"));
    }
    let event = text(body, "event", &mut problems).unwrap_or_default();
    if event.is_empty() {
        problems.push(problem(
            "event",
            format!("required: one of {}", EVENTS.join(", ")),
        ));
    } else {
        one_of(event, EVENTS, "event", &mut problems);
    }
    let trigger_type = text(body, "trigger_type", &mut problems).unwrap_or("DML");
    one_of(trigger_type, &["DML"], "trigger_type", &mut problems);
    let enabled = match body.get("enabled") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            problems.push(problem(
                "enabled",
                format!("expected true or false, got {other}"),
            ));
            true
        }
    };
    let predicates = predicates(body.get("predicates"), &mut problems);
    let actions = actions(body.get("actions"), &mut problems);
    let rule_id = text(body, "rule_id", &mut problems).map(str::to_owned);
    if actions.is_empty() && rule_id.is_none() {
        problems.push(problem(
            "actions",
            "at least one action is required (or rule_id, the older form)",
        ));
    }
    let watched = (
        text(body, "dataset_id", &mut problems).map(str::to_owned),
        text(body, "layer", &mut problems).map(str::to_owned),
        text(body, "table", &mut problems).map(str::to_owned),
    );
    match &watched {
        (Some(_), _, None) | (None, None, Some(_)) => {}
        (None, Some(_), _) => problems.push(problem("dataset_id", "layer needs the dataset_id it belongs to")),
        (Some(_), _, Some(_)) => problems.push(problem("table", "give either dataset_id (with layer) or table, not both")),
        (None, None, None) => problems.push(problem(
            "dataset_id",
            "say what the trigger watches: dataset_id (and layer), or table (a PostgreSQL schema.table)",
        )),
    }
    if let (_, _, Some(table)) = &watched
        && table
            .split_once('.')
            .is_none_or(|(s, t)| s.is_empty() || t.is_empty())
    {
        problems.push(problem("table", format!("{table:?} is not schema.table")));
    }
    let operations = match body.get("operations") {
        None | Some(Value::Null) => Vec::new(),
        Some(value) => {
            serde_json::from_value::<Vec<Operation>>(value.clone()).unwrap_or_else(|e| {
                problems.push(problem(
                    "operations",
                    format!("not a list of operations: {e}"),
                ));
                Vec::new()
            })
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok((
        TriggerSpec {
            name: name.to_owned(),
            event: event.to_owned(),
            trigger_type: trigger_type.to_owned(),
            predicates,
            actions,
            rule_id,
            enabled,
            dataset_id: None,
            layer: None,
            table: String::new(),
            operations,
        },
        watched,
    ))
}

/// The operation a body describes (its id and default order given by the caller), checked:
/// `operation_type`, a capability of the registry, parameters against its schema.
pub fn parse_operation(
    body: &Value,
    id: String,
    default_order: i64,
) -> Result<Operation, Vec<FieldProblem>> {
    let Some(object) = body.as_object() else {
        return Err(vec![problem(
            "",
            "expected an object {operation_type, capability, params, order}",
        )]);
    };
    let mut problems = Vec::new();
    for key in object.keys() {
        if !["operation_type", "capability", "params", "order", "id"].contains(&key.as_str()) {
            problems.push(problem(key.clone(), "unknown field"));
        }
    }
    let operation_type = text(object, "operation_type", &mut problems).unwrap_or("BEFORE");
    one_of(
        operation_type,
        OPERATION_TYPES,
        "operation_type",
        &mut problems,
    );
    let capability = text(object, "capability", &mut problems).unwrap_or_default();
    if capability.is_empty() {
        problems.push(problem(
            "capability",
            "a capability name is required (GET /capabilities)",
        ));
    }
    let params = match object.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            problems.push(problem("params", "expected an object"));
            Map::new()
        }
    };
    let order = match object.get("order") {
        None | Some(Value::Null) => default_order,
        Some(value) => value.as_i64().unwrap_or_else(|| {
            problems.push(problem("order", "expected an integer"));
            default_order
        }),
    };
    if problems.is_empty() && !capability.is_empty() {
        let rule = json!({"name": "operation", "capability": capability, "params": params});
        if let Some(rule) = rule.as_object() {
            match crate::rules::check::problems(rule, "") {
                Ok(found) => problems.extend(found.into_iter().map(|p| problem(p.path, p.message))),
                Err(error) => problems.push(problem("capability", error.message)),
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Operation {
        id,
        operation_type: operation_type.to_owned(),
        capability: capability.to_owned(),
        params,
        order,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::parse;

    fn paths(body: &serde_json::Value) -> Vec<String> {
        parse(body)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.path)
            .collect()
    }

    #[test]
    fn every_problem_is_named_by_its_field() {
        let good = json!({"name": "n", "event": "DATA_CHANGED", "table": "public.t",
                          "actions": [{"action_type": "NOTIFY"}]});
        assert!(parse(&good).is_ok());
        let (spec, watched) = parse(&good).unwrap_or_else(|e| unreachable!("{e:?}"));
        assert_eq!((spec.trigger_type.as_str(), spec.enabled), ("DML", true));
        assert_eq!(watched.2.as_deref(), Some("public.t"));
        for (change, expected) in [
            (json!({"name": ""}), "name"),
            (json!({"event": null}), "event"),
            (json!({"trigger_type": "DDL"}), "trigger_type"),
            (json!({"enabled": "yes"}), "enabled"),
            (json!({"table": "t"}), "table"),
            (json!({"dataset_id": "d"}), "table"),
            (json!({"actions": []}), "actions"),
            (
                json!({"actions": [{"action_type": "RUN_PIPELINE", "config": {}}]}),
                "actions[0].config",
            ),
            (
                json!({"actions": [{"action_type": "NOTIFY", "config": {"message": 3}}]}),
                "actions[0].config.message",
            ),
            (
                json!({"predicates": [{"type": "attr", "op": "intersects", "ref_table": "x"}]}),
                "predicates[0].type",
            ),
            (
                json!({"predicates": [{"type": "geom", "op": "intersects"}]}),
                "predicates[0].ref_table",
            ),
            (json!({"predicates": {}}), "predicates"),
            (json!({"extra": 1}), "extra"),
        ] {
            let mut body = good.clone();
            for (key, value) in change.as_object().into_iter().flatten() {
                body[key] = value.clone();
            }
            assert!(
                paths(&body).contains(&expected.to_owned()),
                "{change}: {:?}",
                paths(&body)
            );
        }
        assert_eq!(paths(&json!([])), [""]);
    }
}
