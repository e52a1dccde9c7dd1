//! GISPulse's two document forms, recognised and read as GISPulse 2.2.3 reads them: a rules
//! file (v1, a JSON array of `{name, capability, config, enabled, order, ...}`) and a pipeline
//! (v2, `{version: 2, steps, ref_layers, triggers}`), with their ordering, enabling and
//! defaults applied, so that [`super::lower`] sees only the steps that run, in the order they
//! run.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::Problem;

/// Which GISPulse form a document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A rules file: a linear chain, distances in EPSG:3857 metres by default.
    RulesV1,
    /// A pipeline (`version: 2`).
    PipelineV2,
}

/// Keys a native rules-file step never has: one of them makes an array a GISPulse rules file.
const V1_MARKERS: &[&str] = &["config", "order", "enabled", "description", "id", "scope"];

/// The GISPulse form of `value`, or `None` when it is a native document. An array is a
/// GISPulse rules file when a step carries a key native steps do not have (`config`, `order`,
/// `enabled`, `description`, `id`, `scope`); an object with `steps` is a GISPulse pipeline when
/// its `version` is 2 (native pipelines have no version 2).
pub fn detect(value: &Value) -> Option<Form> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_object)
            .any(|step| V1_MARKERS.iter().any(|k| step.contains_key(*k)))
            .then_some(Form::RulesV1),
        Value::Object(object) if object.contains_key("steps") => object
            .get("version")
            .and_then(Value::as_f64)
            .is_some_and(|v| v == 2.0)
            .then_some(Form::PipelineV2),
        _ => None,
    }
}

/// One step that runs.
#[derive(Debug, Clone, PartialEq)]
pub struct GpStep {
    pub id: String,
    pub capability: String,
    pub params: Map<String, Value>,
    /// The JSON path of `params` in the user's document.
    pub params_path: String,
    /// The step or layer it reads (v2 with `input`); `None`: the previous step.
    pub input: Option<String>,
    /// A v2 `when` predicate (linear pipelines only).
    pub when: Option<Value>,
    pub when_path: String,
}

/// A GISPulse document as it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct GpDocument {
    pub form: Form,
    pub name: String,
    /// The enabled capability steps, in the order GISPulse runs them.
    pub steps: Vec<GpStep>,
    /// v2 `ref_layers`: alias → the path GISPulse would read.
    pub ref_layers: BTreeMap<String, String>,
    /// v2: some step names its `input` (GISPulse then runs the steps as a graph).
    pub graph: bool,
    /// Remarks on what GISPulse ignores here (skipped steps, triggers, ...).
    pub notes: Vec<String>,
}

/// Python's truthiness of a JSON value (`enabled: 0` and `enabled: ""` disable; `"false"`
/// enables, as in GISPulse).
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// An `order` as a sort key (numbers only; anything else keeps the position).
fn order_key(value: Option<&Value>, position: usize) -> f64 {
    value.and_then(Value::as_f64).unwrap_or(position as f64)
}

/// Reads a GISPulse document of form `form`; every problem is listed at its path.
pub fn read(value: &Value, form: Form) -> Result<GpDocument, Vec<Problem>> {
    match form {
        Form::RulesV1 => read_rules(value),
        Form::PipelineV2 => read_pipeline(value),
    }
}

fn read_rules(value: &Value) -> Result<GpDocument, Vec<Problem>> {
    let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut ordered = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(rule) = item.as_object() else {
            problems.push(Problem::new(format!("[{i}]"), "must be an object"));
            continue;
        };
        let (name, capability) = (text(rule, "name"), text(rule, "capability"));
        for (key, found) in [("name", &name), ("capability", &capability)] {
            if found.as_deref().is_none_or(|s| s.trim().is_empty()) {
                problems.push(Problem::new(
                    format!("[{i}].{key}"),
                    "a non-empty string is required",
                ));
            }
        }
        if rule.contains_key("params") && !rule.contains_key("config") {
            notes.push(format!(
                "[{i}]: a GISPulse rule's parameters are `config`; its `params` is ignored, as GISPulse ignores it"
            ));
        }
        let mut params = match rule.get("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(config)) => config.clone(),
            Some(_) => {
                problems.push(Problem::new(format!("[{i}].config"), "must be an object"));
                continue;
            }
        };
        let config_order = params.remove("order");
        for key in ["name", "description", "enabled", "target_layer"] {
            params.remove(key);
        }
        let order = order_key(rule.get("order").or(config_order.as_ref()), i);
        if !rule.get("enabled").is_none_or(truthy) {
            continue;
        }
        ordered.push((
            order,
            GpStep {
                id: name.unwrap_or_default(),
                capability: capability.unwrap_or_default(),
                params,
                params_path: format!("[{i}].config"),
                input: None,
                when: None,
                when_path: String::new(),
            },
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(GpDocument {
        form: Form::RulesV1,
        name: String::new(),
        steps: ordered.into_iter().map(|(_, step)| step).collect(),
        ref_layers: BTreeMap::new(),
        graph: false,
        notes,
    })
}

fn text(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn read_pipeline(value: &Value) -> Result<GpDocument, Vec<Problem>> {
    let empty = Map::new();
    let document = value.as_object().unwrap_or(&empty);
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let steps = match document.get("steps") {
        Some(Value::Array(steps)) if !steps.is_empty() => steps.as_slice(),
        _ => {
            problems.push(Problem::new("steps", "must be a list of at least one step"));
            &[]
        }
    };
    let mut ref_layers = BTreeMap::new();
    match document.get("ref_layers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(layers)) => {
            for (alias, path) in layers {
                match path.as_str() {
                    Some(path) => {
                        ref_layers.insert(alias.clone(), path.to_owned());
                    }
                    None => problems.push(Problem::new(
                        format!("ref_layers.{alias}"),
                        "must be a path",
                    )),
                }
            }
        }
        Some(_) => problems.push(Problem::new(
            "ref_layers",
            "must be an object of alias → path",
        )),
    }
    if let Some(triggers) = document.get("triggers").and_then(Value::as_array)
        && !triggers.is_empty()
    {
        notes.push(format!(
            "triggers: {} trigger(s) are not run by a pipeline run (GISPulse's `run` ignores them too); register them with POST /api/triggers",
            triggers.len()
        ));
    }
    let graph = steps
        .iter()
        .any(|s| s.get("input").is_some_and(|i| !i.is_null()));
    let mut ordered = Vec::new();
    for (i, item) in steps.iter().enumerate() {
        let Some(step) = item.as_object() else {
            problems.push(Problem::new(format!("steps[{i}]"), "must be an object"));
            continue;
        };
        let id = text(step, "id")
            .or_else(|| text(step, "name"))
            .unwrap_or_else(|| format!("step_{i}"));
        if !step.get("enabled").is_none_or(truthy) {
            continue;
        }
        let kind = step
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("capability");
        let Some(capability) = text(step, "capability").filter(|_| kind == "capability") else {
            notes.push(format!(
                "steps[{i}] ({id}): skipped, as GISPulse skips a step of type {kind:?} or without a capability"
            ));
            continue;
        };
        let (key, params) = match (step.get("params"), step.get("config")) {
            (Some(p), _) if !p.is_null() => ("params", p),
            (_, Some(c)) if !c.is_null() => ("config", c),
            _ => ("params", &Value::Null),
        };
        let params = match params {
            Value::Null => Map::new(),
            Value::Object(p) => p.clone(),
            _ => {
                problems.push(Problem::new(
                    format!("steps[{i}].{key}"),
                    "must be an object",
                ));
                continue;
            }
        };
        let input = match step.get("input") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(Value::Array(names)) if names.len() == 1 && names[0].is_string() => {
                names[0].as_str().map(str::to_owned)
            }
            Some(_) => {
                problems.push(Problem::new(
                    format!("steps[{i}].input"),
                    "must be a step id or a list of one (GISPulse runs no capability on several inputs)",
                ));
                continue;
            }
        };
        let when = step.get("when").filter(|w| truthy(w)).cloned();
        if graph && when.is_some() {
            notes.push(format!(
                "steps[{i}].when: ignored, as GISPulse ignores conditions when steps name their input"
            ));
        }
        ordered.push((
            order_key(step.get("order"), i),
            GpStep {
                id,
                capability,
                params,
                params_path: format!("steps[{i}].{key}"),
                input,
                when: if graph { None } else { when },
                when_path: format!("steps[{i}].when"),
            },
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(GpDocument {
        form: Form::PipelineV2,
        name: text(document, "name").unwrap_or_default(),
        steps: ordered.into_iter().map(|(_, step)| step).collect(),
        ref_layers,
        graph,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn forms_are_told_apart_from_native_documents() {
        assert_eq!(
            detect(&json!([{"name": "a", "capability": "buffer", "config": {}}])),
            Some(Form::RulesV1)
        );
        assert_eq!(
            detect(&json!([{"name": "a", "capability": "buffer", "params": {}}])),
            None
        );
        assert_eq!(
            detect(&json!({"version": 2, "steps": []})),
            Some(Form::PipelineV2)
        );
        assert_eq!(detect(&json!({"name": "p", "steps": []})), None);
        assert_eq!(
            detect(&json!({"name": "r", "capability": "buffer", "config": {}})),
            None
        );
    }

    #[test]
    fn rules_run_enabled_in_order() {
        let document = json!([
            {"name": "a", "capability": "filter", "config": {"order": 5, "expression": "x > 1"}},
            {"name": "b", "capability": "calculate", "order": 1, "config": {}},
            {"name": "c", "capability": "sort", "config": {"by": "x"}},
            {"name": "off", "capability": "sort", "enabled": 0, "config": {}},
            {"name": "on", "capability": "sort", "enabled": "false", "order": 9, "config": {}},
        ]);
        let read = read(&document, Form::RulesV1).unwrap();
        let ids: Vec<&str> = read.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "a", "on"]);
        assert!(!read.steps[2].params.contains_key("order"));
    }

    #[test]
    fn pipelines_take_aliases_and_skip_what_gispulse_skips() {
        let document = json!({"version": 2, "ref_layers": {"zones": "z.gpkg"},
        "triggers": [{"on": "manual", "then": "run_pipeline"}],
        "steps": [
            {"name": "first", "capability": "filter", "config": {"expression": "x > 1"}},
            {"id": "sql", "type": "custom_sql", "params": {}},
            {"capability": "sort", "params": {"by": "x"}, "order": -1},
        ]});
        let read = read(&document, Form::PipelineV2).unwrap();
        let ids: Vec<&str> = read.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["step_2", "first"]);
        assert_eq!(read.steps[1].params_path, "steps[0].config");
        assert_eq!(read.ref_layers["zones"], "z.gpkg");
        assert_eq!(read.notes.len(), 2);
    }

    #[test]
    fn malformed_documents_name_the_field() {
        let problems = read(&json!([{"capability": "x"}, 3]), Form::RulesV1).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["[0].name", "[1]"]);
        let problems = read(
            &json!({"version": 2, "steps": [{"id": "a", "capability": "x", "input": ["a", "b"]}]}),
            Form::PipelineV2,
        )
        .unwrap_err();
        assert_eq!(problems[0].path, "steps[0].input");
    }
}
