//! GISPulse's `topology_check`, `duplicate_geometry` and `attribute_validation` onto the
//! native reports with Shapely's predicates, the first-in-row-order rule and rules as Python
//! checks them, features named by `id_col` or else by their row position (GISPulse's fresh
//! pandas index), the report's columns renamed as GISPulse's.

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "topology_check" => topology_check,
        "duplicate_geometry" => duplicate_geometry,
        "attribute_validation" => attribute_validation,
        _ => return None,
    })
}

/// `key: id_col` when GISPulse names one, else the rows' positions.
fn feature_key(args: &mut Args<'_>, native: &mut Map<String, Value>) {
    match args.string("id_col") {
        Some(id) => {
            args.note("id_col must be a field of the input (GISPulse falls back to the row position when it is not)");
            native.insert("key".into(), json!(id));
        }
        None => {
            native.insert("position_key".into(), json!(true));
        }
    }
}

fn topology_check(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let validity = args.bool("check_validity").unwrap_or(true);
    let simple = args.bool("check_self_intersections").unwrap_or(true);
    let overlaps = args.bool("check_overlaps").unwrap_or(true);
    let mut checks = Vec::new();
    if validity || simple {
        checks.push("null_geometry");
    }
    if validity {
        checks.push("invalid");
    }
    if simple {
        checks.push("self_intersection");
    }
    if overlaps {
        checks.push("overlap");
    }
    let mut native = params([("predicates", json!("shapely")), ("checks", json!(checks))]);
    feature_key(args, &mut native);
    out.main("topology_check", native);
    let feature = "CAST(\"feature\" AS TEXT)";
    let related = "CAST(\"related\" AS TEXT)";
    out.columns_as(
        json!({
                "feature_id": format!("CASE WHEN \"problem\" = 'overlap' THEN {feature} || '+' || {related} ELSE {feature} END"),
                "issue_type": "CASE WHEN \"problem\" = 'invalid' THEN 'invalid_geometry' ELSE \"problem\" END",
                "description": format!(
                    "CASE \"problem\" WHEN 'null_geometry' THEN 'Geometry is null.' \
                     WHEN 'invalid' THEN 'Invalid geometry: ' || \"reason\" \
                     WHEN 'self_intersection' THEN 'Geometry is not simple (self-intersection detected).' \
                     ELSE 'Features ' || {feature} || ' and ' || {related} || ' ' || replace(\"reason\", 'the polygons ', '') || '.' END"
                ),
            }),
        &["feature_id", "issue_type", "description"],
    );
}

fn duplicate_geometry(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("tolerance").unwrap_or(0.0);
    if tolerance.is_nan() || tolerance < 0.0 {
        args.problem(
            "tolerance",
            "must be 0 or more (GISPulse finds no duplicate below 0)",
        );
        return;
    }
    let mut native = params([
        ("rule", json!("first_in_row_order")),
        ("tolerance", json!(tolerance)),
    ]);
    feature_key(args, &mut native);
    out.main("duplicate_geometry", native);
    out.columns_as(
        json!({"feature_id": "\"feature\"", "duplicate_of": "\"related\""}),
        &["feature_id", "duplicate_of"],
    );
}

/// One column's GISPulse rules as a native rule with `rules_as: python`; `None` after a
/// problem.
fn python_rule(args: &mut Args<'_>, column: &str, given: &Value) -> Option<Value> {
    let at = format!("schema.{column}");
    let Some(given) = given.as_object() else {
        args.problem(&at, "must be an object of rules");
        return None;
    };
    let mut rule = params([("field", json!(column))]);
    for (name, value) in given {
        let fine = match (name.as_str(), value) {
            ("type", Value::String(t)) => {
                rule.insert("type".into(), json!(t.to_lowercase()));
                true
            }
            ("nullable", Value::Bool(nullable)) => {
                rule.insert("not_null".into(), json!(!nullable));
                true
            }
            ("min" | "max", Value::Number(_)) => {
                rule.insert(name.clone(), value.clone());
                true
            }
            ("pattern", Value::String(_)) => {
                rule.insert("regex".into(), value.clone());
                true
            }
            ("allowed", Value::Array(items))
                if items
                    .iter()
                    .all(|i| i.is_number() || i.is_string() || i.is_boolean()) =>
            {
                rule.insert("allowed".into(), value.clone());
                true
            }
            ("type" | "nullable" | "min" | "max" | "pattern" | "allowed", _) => {
                args.problem(
                    &format!("{at}.{name}"),
                    "is not of the kind GISPulse reads (type and pattern texts, nullable a boolean, min and max numbers, allowed a list of numbers, texts and booleans)",
                );
                false
            }
            _ => {
                args.problem(
                    &format!("{at}.{name}"),
                    "is not a rule GISPulse checks (type, nullable, min, max, pattern, allowed)",
                );
                false
            }
        };
        if !fine {
            return None;
        }
    }
    Some(Value::Object(rule))
}

fn attribute_validation(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(schema) = args.object("schema") else {
        args.problem("schema", "is required: an object of rules per column");
        return;
    };
    if schema.is_empty() {
        args.problem("schema", "is empty: there is nothing to check");
        return;
    }
    let mut rules = Vec::new();
    for (column, given) in schema {
        match python_rule(args, column, given) {
            Some(rule) => rules.push(rule),
            None => return,
        }
    }
    args.note("attribute_validation: patterns are read by Rust's regex (Python's re syntax without look-around or back-references)");
    let mut native = params([("rules_as", json!("python")), ("rules", json!(rules))]);
    feature_key(args, &mut native);
    out.main("attribute_validation", native);
    out.columns_as(
        json!({
            "feature_id": "\"feature\"",
            "column": "\"field\"",
            "rule": "\"problem\"",
            "description": "\"reason\"",
        }),
        &["feature_id", "column", "rule", "value", "description"],
    );
}
