//! The *Attributes and reshape* group and `filter`: GISPulse's names, shapes and pandas
//! expressions onto native attribute steps.

use serde_json::{Value, json};

use super::{Args, Emitted, Scope, Translator, compiled, field_type, params, reference_layer};
use crate::gispulse::pandas;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "filter" => filter,
        "calculate" => calculate,
        "case_when" => case_when,
        "add_field" => add_field,
        "drop_field" => drop_field,
        "rename_field" => rename_field,
        "cast_field" => cast_field,
        "coalesce_fields" => coalesce_fields,
        "select_columns" => select_columns,
        "sort" => sort,
        "top_n" => top_n,
        "describe" => describe,
        "lookup_table" => lookup_table,
        "unpivot" => unpivot,
        "deduplicate" => deduplicate,
        "random_sample" => random_sample,
        _ => return None,
    })
}

/// `filter`: `expression` (a pandas query) and/or a spatial test against a reference layer.
fn filter(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    if let Some(expression) = args.string("expression").filter(|e| !e.trim().is_empty())
        && let Some(condition) = compiled(args, "expression", &expression)
    {
        out.main("filter", params([("where", json!(condition))]));
    }
    // Distances are measured only with a buffered reference, which is refused below.
    args.value("crs_meters");
    let predicate = args.string("spatial_predicate");
    // Without both a predicate and a reference GISPulse filters nothing spatially.
    let Some(predicate) = predicate.filter(|_| args.has("ref_layer")) else {
        args.value("ref_layer");
        args.value("ref_filter");
        return;
    };
    let Some(mut source) = reference_layer(args, scope, out, true) else {
        return;
    };
    // GISPulse tests each feature against the union of the reference layer: for `intersects`
    // and `disjoint` that is the same as against any of its features.
    let (native, invert) = match predicate.as_str() {
        "intersects" => ("intersects", false),
        "disjoint" => ("intersects", true),
        "within" | "contains" | "touches" | "crosses" | "overlaps" => {
            source = out.side(
                "dissolve",
                params([("on_invalid", json!("error"))]),
                &source,
            );
            (predicate.as_str(), false)
        }
        other => {
            args.problem(
                "spatial_predicate",
                format!("{other:?} is not supported (intersects, disjoint, within, contains, touches, crosses, overlaps are)"),
            );
            return;
        }
    };
    if args.has("buffer_distance") {
        args.problem(
            "buffer_distance",
            "a buffered reference is not supported yet",
        );
    }
    out.main(
        "intersects",
        params([
            ("ref_layer", json!(source)),
            ("predicate", json!(native)),
            ("invert", json!(invert)),
        ]),
    );
}

/// `calculate`: `{column: expression}`, each expression seeing the columns computed before it
/// (one native step each, a column computed before those that read it).
fn calculate(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(expressions) = args.object("expressions") else {
        args.problem("expressions", "is required");
        return;
    };
    // Each entry becomes a step: past the step limit the document is refused before any work.
    if expressions.len() > crate::spec::document::MAX_STEPS {
        args.problem(
            "expressions",
            format!(
                "{} expressions: at most {} (the step limit)",
                expressions.len(),
                crate::spec::document::MAX_STEPS
            ),
        );
        return;
    }
    // Each expression compiled once, with the columns it reads.
    let mut pending = Vec::new();
    for (column, text) in expressions {
        let key = format!("expressions.{column}");
        let Some(text) = text.as_str() else {
            args.problem(&key, "must be an expression string");
            continue;
        };
        match pandas::parse(text).and_then(|e| pandas::compile(&e)) {
            Ok(expr) => pending.push((column.clone(), expr)),
            Err(message) => args.problem(&key, message),
        }
    }
    // GISPulse computes the entries in order, each seeing those before it; JSON key order is
    // not kept here, so an entry comes after the entries whose columns it reads.
    while !pending.is_empty() {
        let next = (0..pending.len())
            .find(|&i| {
                let reads = pending[i].1.columns();
                !pending
                    .iter()
                    .enumerate()
                    .any(|(j, (column, _))| j != i && reads.contains(column))
            })
            .unwrap_or(0);
        let (column, expr) = pending.remove(next);
        out.main(
            "calculate",
            params([("expressions", json!({column: expr.to_sql()}))]),
        );
    }
}

fn case_when(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let field = args.string("target_col");
    let cases = args.value("cases").and_then(Value::as_array);
    let (Some(field), Some(cases)) = (field, cases) else {
        args.problem("target_col", "target_col and cases are required");
        return;
    };
    let mut branches = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let key = format!("cases[{i}].when");
        let Some(when) = case.get("when").and_then(Value::as_str) else {
            args.problem(&key, "must be an expression string");
            continue;
        };
        if let Some(condition) = compiled(args, &key, when) {
            branches.push(json!({"when": condition, "then": case.get("then").cloned().unwrap_or(Value::Null)}));
        }
    }
    let otherwise = args.value("else_").cloned().unwrap_or(Value::Null);
    out.main(
        "case_when",
        params([
            ("field", json!(field)),
            ("cases", json!(branches)),
            ("else", otherwise),
        ]),
    );
}

fn add_field(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let fields = args
        .value("fields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if args.bool("overwrite") == Some(true) {
        args.problem("overwrite", "overwrite: true is not supported yet");
    }
    for (i, field) in fields.iter().enumerate() {
        let Some(name) = field.get("name").and_then(Value::as_str) else {
            args.problem(&format!("fields[{i}].name"), "is required");
            continue;
        };
        let dtype = field
            .get("dtype")
            .and_then(Value::as_str)
            .unwrap_or("string");
        let Some(native_type) = field_type(dtype) else {
            args.problem(
                &format!("fields[{i}].dtype"),
                format!("unknown type {dtype:?}"),
            );
            continue;
        };
        let value = field.get("default").cloned().unwrap_or(Value::Null);
        out.main(
            "add_field",
            params([
                ("name", json!(name)),
                ("type", json!(native_type)),
                ("value", value),
            ]),
        );
    }
}

fn drop_field(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if args.bool("ignore_missing") == Some(false) {
        args.note(
            "ignore_missing: false: a missing field fails the step, as native drop_field does",
        );
    }
    if let Some(fields) = args.names("fields").filter(|f| !f.is_empty()) {
        out.main("drop_field", params([("fields", json!(fields))]));
    }
}

fn rename_field(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    args.bool("ignore_missing");
    if let Some(mapping) = args.object("mapping").filter(|m| !m.is_empty()) {
        out.main(
            "rename_field",
            params([("fields", Value::Object(mapping.clone()))]),
        );
    }
}

fn cast_field(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if let Some(errors) = args.string("errors").filter(|e| e != "raise") {
        args.problem(
            "errors",
            format!("errors: {errors:?} is not supported yet (raise is)"),
        );
    }
    let Some(casts) = args.object("casts") else {
        args.problem("casts", "is required");
        return;
    };
    for (field, dtype) in casts {
        match dtype.as_str().and_then(field_type) {
            Some(native_type) => out.main(
                "cast_field",
                params([("field", json!(field)), ("type", json!(native_type))]),
            ),
            None => args.problem(&format!("casts.{field}"), format!("unknown type {dtype}")),
        }
    }
}

fn coalesce_fields(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let (Some(sources), Some(target)) = (args.names("sources"), args.string("target_col")) else {
        args.problem("sources", "sources and target_col are required");
        return;
    };
    match sources.as_slice() {
        [] => args.problem("sources", "needs at least one field"),
        [only] => out.main(
            "calculate",
            params([(
                "expressions",
                json!({target: crate::sql::quote::ident(only)}),
            )]),
        ),
        _ => out.main(
            "coalesce_fields",
            params([("fields", json!(sources)), ("field", json!(target))]),
        ),
    }
}

fn select_columns(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if let Some(fields) = args.names("fields").filter(|f| !f.is_empty()) {
        let fields: Vec<String> = fields.into_iter().filter(|f| f != "geometry").collect();
        out.main("select_columns", params([("fields", json!(fields))]));
    }
}

/// `ascending` as one flag per sort key (a single flag applies to all).
fn ascending(args: &mut Args<'_>, keys: usize, default: bool) -> Vec<bool> {
    match args.value("ascending") {
        None => vec![default; keys],
        Some(Value::Bool(b)) => vec![*b; keys],
        Some(Value::Array(flags)) if flags.len() == keys && flags.iter().all(Value::is_boolean) => {
            flags
                .iter()
                .map(|f| f.as_bool().unwrap_or(default))
                .collect()
        }
        Some(other) => {
            args.problem(
                "ascending",
                format!("expected true, false or one flag per key, got {other}"),
            );
            vec![default; keys]
        }
    }
}

fn sort(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let by = args.names("by").unwrap_or_default();
    let flags = ascending(args, by.len(), true);
    if args.string("na_position").is_some_and(|p| p == "first") {
        args.problem("na_position", "NULLs first is not supported yet");
    }
    sorted(out, &by, &flags);
}

/// A native sort by `by`, each ascending where its flag is (nothing when `by` is empty).
fn sorted(out: &mut Emitted, by: &[String], ascending: &[bool]) {
    if by.is_empty() {
        return;
    }
    let keys: Vec<Value> = by
        .iter()
        .zip(ascending)
        .map(|(field, up)| json!({"field": field, "descending": !up}))
        .collect();
    out.main("sort", params([("by", json!(keys))]));
}

/// pandas' `drop_duplicates(keys, keep)` after an optional `sort_values(order_by)`: the first
/// (or last) row of each group in that order, the kept rows in that order.
fn deduplicate(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(keys) = args.names("keys").filter(|k| !k.is_empty()) else {
        args.problem("keys", "is required");
        return;
    };
    let keep = args.string("keep").unwrap_or_else(|| "first".into());
    if !matches!(keep.as_str(), "first" | "last") {
        args.problem("keep", format!("{keep:?} is not one of first, last"));
        return;
    }
    let order_by = args.names("order_by").unwrap_or_default();
    let flags = ascending(args, order_by.len(), true);
    sorted(out, &order_by, &flags);
    out.main(
        "deduplicate",
        params([("fields", json!(keys)), ("keep", json!(keep))]),
    );
}

fn top_n(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let n = args.integer("n");
    let by = args.names("by").unwrap_or_default();
    let flags = ascending(args, by.len(), false);
    let ([field], Some(n)) = (by.as_slice(), n) else {
        args.problem("by", "top_n needs n and one field in by");
        return;
    };
    if n < 1 {
        args.problem("n", "must be at least 1");
        return;
    }
    out.main(
        "top_n",
        params([
            ("n", json!(n)),
            ("by", json!(field)),
            ("descending", json!(!flags[0])),
        ]),
    );
}

/// GISPulse's `describe` passes its layer through (its report is not part of the output).
fn describe(args: &mut Args<'_>, _: &Scope<'_>, _: &mut Emitted) {
    args.value("sample_size");
    args.value("include_geometry");
    args.note("describe: dropped (GISPulse passes the layer through unchanged)");
}

/// The column a GISPulse lookup writes before it replaces its source column.
const LOOKED_UP: &str = "__looked_up";

/// `lookup_table`: `source_col` mapped through `mapping` into `target_col` (by default over
/// `source_col` itself); `default: "__source__"` keeps the source value where no key matches.
fn lookup_table(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let (Some(source), Some(mapping)) = (args.string("source_col"), args.object("mapping")) else {
        args.problem("source_col", "source_col and mapping are required");
        return;
    };
    let target = args.string("target_col");
    let default = args.value("default").cloned().unwrap_or(Value::Null);
    let keep_source = default.as_str() == Some("__source__");
    let overwrite = target.as_deref().is_none_or(|t| t == source);
    let output = if overwrite || keep_source {
        LOOKED_UP.to_owned()
    } else {
        target.clone().unwrap_or_default()
    };
    out.main(
        "lookup_table",
        params([
            ("field", json!(source)),
            ("output", json!(output)),
            ("map", Value::Object(mapping.clone())),
            ("default", if keep_source { Value::Null } else { default }),
        ]),
    );
    if keep_source {
        let written = target
            .clone()
            .filter(|_| !overwrite)
            .unwrap_or_else(|| source.clone());
        let expression = format!(
            "coalesce({}, {})",
            crate::sql::quote::ident(LOOKED_UP),
            crate::sql::quote::ident(&source)
        );
        out.main(
            "calculate",
            params([("expressions", json!({written.clone(): expression}))]),
        );
        out.main("drop_field", params([("fields", json!([LOOKED_UP]))]));
    } else if overwrite {
        out.main("drop_field", params([("fields", json!([source.clone()]))]));
        out.main(
            "rename_field",
            params([("fields", json!({LOOKED_UP: source}))]),
        );
    }
}

/// `unpivot` (pandas `melt`): one row per input row and melted column; the columns neither kept
/// (`id_vars`) nor melted are left out.
fn unpivot(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(ids) = args.names("id_vars") else {
        args.problem("id_vars", "is required");
        return;
    };
    let Some(melted) = args.names("value_vars").filter(|v| !v.is_empty()) else {
        args.problem(
            "value_vars",
            "the columns to melt must be named (every other column is not supported yet)",
        );
        return;
    };
    let name = args.string("var_name").unwrap_or_else(|| "variable".into());
    let value = args.string("value_name").unwrap_or_else(|| "value".into());
    out.main(
        "unpivot",
        params([
            ("fields", json!(melted)),
            ("name_field", json!(name)),
            ("value_field", json!(value)),
        ]),
    );
    let mut kept = ids;
    kept.extend([name, value]);
    out.main("select_columns", params([("fields", json!(kept))]));
}

/// pandas' `sample(n | frac, replace, random_state=seed)`: NumPy's draw (native
/// `method: numpy`), the rows in the order drawn.
fn random_sample(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = params([
        ("method", json!("numpy")),
        ("replace", json!(args.bool("replace").unwrap_or(false))),
    ]);
    match (args.integer("n"), args.f64("fraction")) {
        (Some(n), None) if n >= 1 => native.insert("n".into(), json!(n)),
        (None, Some(f)) => native.insert("fraction".into(), json!(f)),
        _ => {
            args.problem("n", "give n (at least 1) or fraction, one of them");
            return;
        }
    };
    match args.integer("seed") {
        Some(seed) => {
            native.insert("seed".into(), json!(seed));
        }
        None => args.note(
            "random_sample: GISPulse draws a different sample on every run without a seed; geomill uses seed 42",
        ),
    }
    out.main("random_sample", native);
}
