//! The *Cross-layer and overlay* group (besides `filter`): GISPulse's reference layer, its
//! GeoPandas column names on clashes (`X_left`, `X_right`) and pandas `ref_filter`.

use serde_json::{Value, json};

use super::{Args, Emitted, Scope, Translator, params, reference_layer};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "spatial_join" => spatial_join,
        "intersects" => intersects,
        "erase" => erase,
        "attribute_join" => attribute_join,
        "merge_layers" => merge_layers,
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

/// pandas' `merge` of the reference layer's attributes on `left_on`/`right_on`; a brought
/// column the input has gets `_ref`, and a differently named right key is dropped after.
fn attribute_join(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(left) = args.string("left_on") else {
        args.problem("left_on", "is required");
        return;
    };
    let right = args.string("right_on").unwrap_or_else(|| left.clone());
    let how = args.string("how").unwrap_or_else(|| "left".into());
    if !matches!(how.as_str(), "left" | "inner") {
        args.problem(
            "how",
            format!("{how:?} is not supported yet (left and inner are)"),
        );
    }
    for key in ["prefix", "suffix"] {
        if args.string(key).is_some_and(|s| !s.is_empty()) {
            args.problem(key, "renaming every brought column is not supported yet");
        }
    }
    let columns = args.names("columns").unwrap_or_default();
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    args.note(
        "attribute_join: NULL keys match each other in GISPulse (pandas), nothing in geomill",
    );
    let mut native = params([
        ("other", json!(source)),
        ("how", json!(how)),
        ("suffix", json!("_ref")),
    ]);
    if right == left {
        native.insert("on".into(), json!([left]));
    } else {
        native.insert("left_on".into(), json!([left]));
        native.insert("right_on".into(), json!([right]));
    }
    if !columns.is_empty() {
        native.insert("columns".into(), json!(columns));
    }
    out.main("attribute_join", native);
    if right != left && (columns.is_empty() || columns.contains(&right)) {
        out.main("drop_field", params([("fields", json!([right]))]));
    }
}

/// pandas' `concat` of the input and each `ref_layers` layer, columns matched by name.
fn merge_layers(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let names = args.names("ref_layers").unwrap_or_default();
    if names.is_empty() {
        return;
    }
    let layers: Vec<String> = names.iter().map(|n| (scope.reference)(n)).collect();
    args.note("merge_layers: GISPulse reprojects the layers to the input's CRS; geomill expects them in it");
    out.main("merge_layers", params([("layers", json!(layers))]));
}
