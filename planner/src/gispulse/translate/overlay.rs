//! The *Cross-layer and overlay* group (besides `filter`): GISPulse's reference layer, its
//! GeoPandas column names on clashes (`X_left`, `X_right`) and pandas `ref_filter`.

use serde_json::{Value, json};

use super::{Args, Emitted, Scope, Translator, params, reference_layer};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "spatial_join" => spatial_join,
        "intersects" => intersects,
        "erase" => erase,
        _ => return None,
    })
}

const JOIN_PREDICATES: &[&str] = &[
    "intersects",
    "within",
    "contains",
    "touches",
    "overlaps",
    "crosses",
    "covers",
    "covered_by",
];

fn spatial_join(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let how = args.string("how").unwrap_or_else(|| "inner".into());
    if !matches!(how.as_str(), "inner" | "left") {
        args.problem(
            "how",
            format!("{how:?} is not supported yet (inner and left are)"),
        );
    }
    let predicate = args
        .string("predicate")
        .unwrap_or_else(|| "intersects".into());
    if !JOIN_PREDICATES.contains(&predicate.as_str()) {
        args.problem(
            "predicate",
            format!("{predicate:?} is not supported (one of {JOIN_PREDICATES:?})"),
        );
    }
    let columns = match args.value("columns") {
        None => Vec::new(),
        Some(Value::Array(names)) if names.is_empty() => {
            args.problem(
                "columns",
                "an empty list (no reference attributes) is not supported yet",
            );
            Vec::new()
        }
        Some(_) => args.names("columns").unwrap_or_default(),
    };
    let Some(source) = reference_layer(args, scope, out, true) else {
        return;
    };
    out.main(
        "spatial_join",
        params([
            ("ref_layer", json!(source)),
            ("predicate", json!(predicate)),
            ("how", json!(how)),
            ("columns", json!(columns)),
            ("suffixes", json!(["_left", "_right"])),
        ]),
    );
}

fn intersects(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    if args.has("wkt") && !args.has("ref_layer") {
        args.value("wkt");
        args.problem("wkt", "a WKT reference is not supported yet (ref_layer is)");
        return;
    }
    args.value("wkt");
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    out.main(
        "intersects",
        params([
            ("ref_layer", json!(source)),
            ("predicate", json!("intersects")),
        ]),
    );
}

fn erase(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    args.value("keep_geom_type");
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    out.main(
        "erase",
        params([("mask", json!(source)), ("on_invalid", json!("error"))]),
    );
}
