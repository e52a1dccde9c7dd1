//! `vector_diff` as GISPulse answers it: every id of either version (`unchanged` ones too) with
//! `diff_status` `added`/`removed`/`modified`/`unchanged`, geometries compared by Hausdorff
//! distance, `attr_changed` and `geom_changed`, a repeated id standing for its last row.

use serde_json::{Value, json};

use super::{Args, Emitted, Scope, Translator, params, reference_layer};
use crate::sql::quote::{ident, string};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "vector_diff" => vector_diff,
        _ => return None,
    })
}

/// The native diff's list of changed fields, read here and dropped.
const CHANGED: &str = "__gispulse_changed";

fn vector_diff(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let id = args.string("id_field").unwrap_or_else(|| "id".into());
    let tolerance = args.f64("tolerance").unwrap_or(0.001);
    if tolerance < 0.0 {
        args.problem("tolerance", "must be 0 or more");
    }
    let fields: Option<Vec<String>> = if args.bool("check_attrs") == Some(false) {
        args.value("attr_fields");
        Some(Vec::new())
    } else {
        match args.value("attr_fields") {
            None => None,
            Some(Value::Array(_)) => args.names("attr_fields"),
            Some(other) => {
                args.problem(
                    "attr_fields",
                    format!("expected a list of names, got {other}"),
                );
                None
            }
        }
    };
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    args.note(
        "vector_diff: GISPulse keeps unchanged ids, compares geometries by Hausdorff distance and lets the last row of a repeated id stand for it (native keep: all, compare_geometry: hausdorff, duplicate_keys: last)",
    );
    let mut native = params([
        ("ref_layer", json!(source)),
        ("key", json!([id])),
        ("compare_geometry", json!("hausdorff")),
        ("tolerance", json!(tolerance)),
        ("keep", json!("all")),
        ("duplicate_keys", json!("last")),
        ("change_field", json!("diff_status")),
        ("changed_fields_field", json!(CHANGED)),
    ]);
    if let Some(fields) = fields {
        native.insert("fields".into(), json!(fields));
    }
    out.main("vector_diff", native);
    let changed = ident(CHANGED);
    let geometry = string("geometry");
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({
                "diff_status": "CASE WHEN diff_status = 'changed' THEN 'modified' ELSE diff_status END",
                "attr_changed": format!("coalesce({changed} NOT IN ('', {geometry}), false)"),
                "geom_changed": format!("{changed} IS NULL OR {changed} = {geometry} OR {changed} LIKE '%,geometry'"),
            }),
        )]),
    );
    out.main("drop_field", params([("fields", json!([CHANGED]))]));
    out.sort_ascending(&[id]);
}
