//! A JSON Schema checker for the subset the capability schemas use (type, enum, const,
//! properties, required, additionalProperties, items, numeric and size bounds, anyOf/oneOf/allOf).
//! It reports every problem with its path, which serde alone cannot (it stops at the first).

use serde_json::Value;

use crate::error::Problem;

/// Every way `value` breaks `schema`, with paths starting at `path`.
pub fn validate(value: &Value, schema: &Value, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    check(value, schema, path, &mut problems);
    problems
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn matches_type(value: &Value, expected: &str) -> bool {
    match expected {
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        other => type_name(value) == other,
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    let short = if text.len() > 40 {
        format!("{}…", &text[..text.floor_char_boundary(40)])
    } else {
        text
    };
    format!("{} {short}", type_name(value))
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn check(value: &Value, schema: &Value, path: &str, problems: &mut Vec<Problem>) {
    let Some(schema) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            problems.push(Problem::new(path, "is not allowed here"));
        }
        return;
    };
    if let Some(expected) = schema.get("type") {
        let allowed: Vec<&str> = match expected {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| matches_type(value, t)) {
            let wanted: Vec<&str> = allowed.iter().copied().filter(|t| *t != "null").collect();
            let wanted = if wanted.is_empty() { allowed } else { wanted };
            problems.push(Problem::new(
                path,
                format!("expected {}, got {}", wanted.join(" or "), describe(value)),
            ));
            return;
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        let names: Vec<String> = options.iter().map(Value::to_string).collect();
        problems.push(Problem::new(
            path,
            format!("expected one of {}, got {}", names.join(", "), value),
        ));
        return;
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        problems.push(Problem::new(
            path,
            format!("expected {constant}, got {value}"),
        ));
        return;
    }
    check_combinators(value, schema, path, problems);
    match value {
        Value::Object(object) => check_object(object, schema, path, problems),
        Value::Array(items) => check_array(items, schema, path, problems),
        Value::Number(n) => check_number(n.as_f64().unwrap_or(f64::NAN), schema, path, problems),
        Value::String(s) => {
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && (s.chars().count() as u64) < min
            {
                problems.push(Problem::new(
                    path,
                    format!("must have at least {min} character(s)"),
                ));
            }
        }
        _ => {}
    }
}

fn check_combinators(
    value: &Value,
    schema: &serde_json::Map<String, Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) {
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            check(value, sub, path, problems);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            if let Some(constants) = constants(options) {
                if !constants.contains(value) {
                    let names: Vec<String> = constants.iter().map(Value::to_string).collect();
                    problems.push(Problem::new(
                        path,
                        format!("expected one of {}, got {value}", names.join(", ")),
                    ));
                }
                continue;
            }
            let results: Vec<Vec<Problem>> =
                options.iter().map(|o| validate(value, o, path)).collect();
            let passing = results.iter().filter(|r| r.is_empty()).count();
            if passing == 0 {
                // Report the option that came closest (fewest problems).
                if let Some(best) = results.into_iter().min_by_key(Vec::len) {
                    problems.extend(best);
                }
            } else if key == "oneOf" && passing > 1 {
                problems.push(Problem::new(path, "matches more than one allowed form"));
            }
        }
    }
}

/// The allowed values when every option is a constant (enums whose variants carry docs).
fn constants(options: &[Value]) -> Option<Vec<Value>> {
    let mut values = Vec::new();
    for option in options {
        let object = option.as_object()?;
        match (object.get("const"), object.get("enum")) {
            (Some(constant), _) => values.push(constant.clone()),
            (None, Some(Value::Array(list))) => values.extend(list.iter().cloned()),
            _ => return None,
        }
    }
    Some(values)
}

fn check_object(
    object: &serde_json::Map<String, Value>,
    schema: &serde_json::Map<String, Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                problems.push(Problem::new(child(path, name), "is required"));
            }
        }
    }
    for (key, item) in object {
        match properties.and_then(|p| p.get(key)) {
            Some(sub) => check(item, sub, &child(path, key), problems),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<&str> = properties
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    problems.push(Problem::new(
                        child(path, key),
                        format!("unknown parameter (expected one of: {})", known.join(", ")),
                    ));
                }
                Some(sub @ Value::Object(_)) => check(item, sub, &child(path, key), problems),
                _ => {}
            },
        }
    }
}

fn check_array(
    items: &[Value],
    schema: &serde_json::Map<String, Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) {
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        problems.push(Problem::new(
            path,
            format!("must have at least {min} item(s)"),
        ));
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
        && (items.len() as u64) > max
    {
        problems.push(Problem::new(
            path,
            format!("must have at most {max} item(s)"),
        ));
    }
    if let Some(item_schema) = schema.get("items") {
        for (index, item) in items.iter().enumerate() {
            check(item, item_schema, &format!("{path}[{index}]"), problems);
        }
    }
}

fn check_number(
    n: f64,
    schema: &serde_json::Map<String, Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum")
        && n < min
    {
        problems.push(Problem::new(
            path,
            format!("must be at least {min}, got {n}"),
        ));
    }
    if let Some(max) = bound("maximum")
        && n > max
    {
        problems.push(Problem::new(
            path,
            format!("must be at most {max}, got {n}"),
        ));
    }
    if let Some(min) = bound("exclusiveMinimum")
        && n <= min
    {
        problems.push(Problem::new(
            path,
            format!("must be greater than {min}, got {n}"),
        ));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && n >= max
    {
        problems.push(Problem::new(
            path,
            format!("must be less than {max}, got {n}"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reports_every_problem_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "distance": {"type": "number"},
                "unit": {"type": "string", "enum": ["meters", "degrees"]},
                "columns": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["distance"],
            "additionalProperties": false
        });
        let problems = validate(
            &json!({"unit": "parsecs", "columns": ["a", 3], "distnace": 5}),
            &schema,
            "steps[2].params",
        );
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "steps[2].params.distance: is required",
                "steps[2].params.unit: expected one of \"meters\", \"degrees\", got \"parsecs\"",
                "steps[2].params.columns[1]: expected string, got integer 3",
                "steps[2].params.distnace: unknown parameter (expected one of: distance, unit, columns)",
            ]
        );
    }

    #[test]
    fn type_mismatch_names_the_expected_type() {
        let problems = validate(&json!("far"), &json!({"type": "number"}), "p.distance");
        assert_eq!(
            problems[0].to_string(),
            "p.distance: expected number, got string \"far\""
        );
        let nullable = json!({"type": ["number", "null"]});
        assert!(validate(&json!(null), &nullable, "x").is_empty());
        assert!(validate(&json!(2), &json!({"type": "integer", "minimum": 3}), "x").len() == 1);
    }
}
