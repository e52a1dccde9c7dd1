//! Rules as graph-editor node templates and back: a node has the capability as its type, the
//! rule's name as its label, input ports for the parameters that name layers, an output port,
//! a parameter form derived from the capability's JSON Schema, and the values. A rule turned
//! into a node and back is the same rule.

use geomill_planner::capabilities::find;
use serde_json::{Map, Value, json};

use crate::error::AppError;

/// The node template of a valid rule (its own fields: name, capability, config or params, ...).
pub fn to_node(rule: &Map<String, Value>, rule_id: Option<&str>) -> Result<Value, AppError> {
    let text = |key: &str| rule.get(key).and_then(Value::as_str).unwrap_or_default();
    let capability = find(text("capability")).ok_or_else(|| {
        AppError::unprocessable(format!(
            "capability {:?} does not exist",
            text("capability")
        ))
    })?;
    let config_key = if rule.contains_key("params") && !rule.contains_key("config") {
        "params"
    } else {
        "config"
    };
    let mut values = match rule.get(config_key) {
        Some(Value::Object(values)) => values.clone(),
        None => Map::new(),
        Some(_) => {
            return Err(AppError::unprocessable(format!(
                "{config_key} is not an object"
            )));
        }
    };
    let parsed = capability
        .parse(&Value::Object(values.clone()), config_key)
        .map_err(|problems| {
            AppError::unprocessable("the rule is invalid; check it with /rules/validate")
                .with_detail(json!({ "errors": problems }))
        })?;
    let mut port_names = vec!["input".to_owned()];
    port_names.extend(
        parsed
            .other_inputs()
            .iter()
            .map(|(name, _)| (*name).to_owned()),
    );
    let inputs: Vec<Value> = port_names
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "required": name != "input",
                "value": values.remove(name),
            })
        })
        .collect();
    let schema = capability.schema();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let parameters: Vec<Value> = schema["properties"]
        .as_object()
        .map(|properties| {
            properties
                .iter()
                .filter(|(name, _)| !port_names.contains(name))
                .map(|(name, property)| {
                    json!({
                        "name": name,
                        "required": required.contains(&name.as_str()),
                        "description": property.get("description"),
                        "schema": resolved(property, schema),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(json!({
        "type": capability.name(),
        "label": text("name"),
        "description": capability.description(),
        "rule_id": rule_id,
        "inputs": inputs,
        "outputs": [{"name": "output"}],
        "parameters": parameters,
        "values": values,
        "rule": {
            "config_key": config_key,
            "scope": rule.get("scope"),
            "enabled": rule.get("enabled"),
        },
    }))
}

/// A property's schema with a top-level `$ref` replaced by its definition.
fn resolved(property: &Value, schema: &Value) -> Value {
    let Some(reference) = property.get("$ref").and_then(Value::as_str) else {
        return property.clone();
    };
    let name = reference.rsplit('/').next().unwrap_or_default();
    schema["$defs"]
        .get(name)
        .or_else(|| schema["definitions"].get(name))
        .cloned()
        .unwrap_or_else(|| property.clone())
}

/// The rule a node stands for (its own fields, to be checked like any rule).
pub fn from_node(node: &Value) -> Result<Map<String, Value>, AppError> {
    let capability = node["type"]
        .as_str()
        .ok_or_else(|| AppError::unprocessable("type: the node names no capability"))?;
    let label = node["label"]
        .as_str()
        .ok_or_else(|| AppError::unprocessable("label: the node has no name"))?;
    let mut config = match &node["values"] {
        Value::Object(values) => values.clone(),
        Value::Null => Map::new(),
        _ => return Err(AppError::unprocessable("values: expected an object")),
    };
    for input in node["inputs"].as_array().into_iter().flatten() {
        let name = input["name"]
            .as_str()
            .ok_or_else(|| AppError::unprocessable("inputs: a port has no name"))?;
        let value = &input["value"];
        if !value.is_null() {
            config.insert(name.to_owned(), value.clone());
        }
    }
    let config_key = match node["rule"]["config_key"].as_str() {
        None | Some("config") => "config",
        Some("params") => "params",
        Some(other) => {
            return Err(AppError::unprocessable(format!(
                "rule.config_key: {other:?} is not config or params"
            )));
        }
    };
    let mut rule = Map::new();
    rule.insert("name".into(), json!(label));
    rule.insert("capability".into(), json!(capability));
    rule.insert(config_key.into(), Value::Object(config));
    for key in ["scope", "enabled"] {
        let value = &node["rule"][key];
        if !value.is_null() {
            rule.insert(key.into(), value.clone());
        }
    }
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{from_node, to_node};

    #[test]
    fn rules_survive_the_round_trip() {
        for rule in [
            json!({"name": "halo", "capability": "buffer", "config": {"distance": 500, "unit": "meters"}}),
            json!({"name": "join", "capability": "spatial_join", "params": {"input": "cities", "ref_layer": "countries", "predicate": "within"}, "scope": "global", "enabled": false}),
        ] {
            let Value::Object(fields) = &rule else {
                unreachable!()
            };
            let node = to_node(fields, None).unwrap_or_else(|e| unreachable!("{}", e.message));
            let back = from_node(&node).unwrap_or_else(|e| unreachable!("{}", e.message));
            assert_eq!(Value::Object(back), rule, "{node}");
        }
    }

    #[test]
    fn layer_parameters_become_ports() {
        let rule = json!({"name": "j", "capability": "spatial_join", "config": {"ref_layer": "countries"}});
        let Value::Object(fields) = &rule else {
            unreachable!()
        };
        let node = to_node(fields, Some("id-1")).unwrap_or_else(|e| unreachable!("{}", e.message));
        let ports: Vec<&str> = node["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert_eq!(ports, ["input", "ref_layer"]);
        assert!(
            node["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["name"] == "predicate"
                    && (p["schema"].get("enum").is_some() || p["schema"].get("oneOf").is_some())),
            "{node}"
        );
    }
}
