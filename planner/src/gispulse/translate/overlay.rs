//! The *Cross-layer and overlay* group (besides `filter`): GISPulse's reference layer, its
//! GeoPandas column names on clashes (`X_left`, `X_right`) and pandas `ref_filter`.

use serde_json::{Value, json};

use super::{
    Args, Emitted, Scope, Translator, class_colors, palette_list, params, reference_layer,
};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "spatial_join" => spatial_join,
        "intersects" => intersects,
        "erase" => erase,
        "attribute_join" => attribute_join,
        "merge_layers" => merge_layers,
        "classify_by_ring" => classify_by_ring,
        "spatial_aggregate" => spatial_aggregate,
        "overlay_intersection" => overlay_intersection,
        "overlay_union" => overlay_union,
        "symmetric_difference" => symmetric_difference,
        "nearest_neighbor" => nearest_neighbor,
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

/// The smallest ring of `ref_layers` (their `ring_field` values) meeting each feature, its rank
/// among the rings' distinct values (1-based; outside: their count + 1), and a colour per
/// class from a `palette` list.
fn classify_by_ring(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let names = args.names("ref_layers").unwrap_or_default();
    let Some((first, rest)) = names.split_first() else {
        args.problem(
            "ref_layers",
            "classify_by_ring needs ring layers (ref_layers)",
        );
        return;
    };
    let mut rings = (scope.reference)(first);
    if !rest.is_empty() {
        let layers: Vec<String> = rest.iter().map(|n| (scope.reference)(n)).collect();
        rings = out.side("merge_layers", params([("layers", json!(layers))]), &rings);
    }
    if args.f64("ring_simplify_tolerance").is_some_and(|t| t > 0.0) {
        args.problem(
            "ring_simplify_tolerance",
            "simplifying the rings first is not supported yet",
        );
    }
    let class = args
        .string("class_col")
        .unwrap_or_else(|| "ring_class".into());
    let mut native = params([
        ("ref_layer", json!(rings)),
        (
            "ring_value_field",
            json!(
                args.string("ring_field")
                    .unwrap_or_else(|| "cost_budget".into())
            ),
        ),
        ("ring_field", json!(class)),
        (
            "value_field",
            json!(
                args.string("value_col")
                    .unwrap_or_else(|| "ring_value".into())
            ),
        ),
        (
            "outside_value",
            json!(args.f64("outside_value").unwrap_or(99999.0)),
        ),
    ]);
    if args.bool("use_centroid") == Some(true) {
        native.insert("use_centroid".into(), json!(true));
    }
    let color = args
        .string("color_col")
        .unwrap_or_else(|| "ring_color".into());
    let palette = palette_list(args, "a named palette's size depends on the rings");
    out.main("classify_by_ring", native);
    if let Some(colors) = palette {
        args.note("a palette with fewer colours than rings + 1 leaves the last classes without colour (GISPulse fails)");
        let case = class_colors(&ident(&class), 1, &colors);
        out.main("calculate", params([("expressions", json!({color: case}))]));
    }
}

/// GISPulse's predicates `P(input, reference)` as native ones `P(reference, input)`.
fn reversed_predicate(predicate: &str) -> Option<&'static str> {
    Some(match predicate {
        "intersects" => "intersects",
        "within" => "contains",
        "contains" => "within",
        "crosses" => "crosses",
        "overlaps" => "overlaps",
        "touches" => "touches",
        _ => return None,
    })
}

/// `agg: {output: [field, function]}` over the reference features matching each input feature
/// (a left join: every input feature kept). A sum of nothing is 0 (pandas); a field aggregated
/// twice takes a native step per function.
fn spatial_aggregate(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let predicate = args
        .string("predicate")
        .unwrap_or_else(|| "intersects".into());
    let Some(native_predicate) = reversed_predicate(&predicate) else {
        args.problem(
            "predicate",
            format!("{predicate:?} is not one of intersects, within, contains, crosses, overlaps, touches"),
        );
        return;
    };
    let Some(entries) = args.object("agg").filter(|a| !a.is_empty()) else {
        args.problem("agg", "is required: {output: [field, function]}");
        return;
    };
    // (output, native field, native function), grouped into steps without a repeated field.
    let mut steps: Vec<Vec<(String, String, &str)>> = Vec::new();
    for (output, entry) in entries {
        let key = format!("agg.{output}");
        let pair = entry
            .as_array()
            .and_then(|p| Some((p.first()?.as_str()?, p.get(1)?.as_str()?)))
            .filter(|_| entry.as_array().is_some_and(|p| p.len() == 2));
        let Some((field, function)) = pair else {
            args.problem(&key, format!("expected [field, function], got {entry}"));
            continue;
        };
        let native = match function {
            "count" | "sum" | "min" | "max" => function,
            "mean" => "avg",
            other => {
                args.problem(
                    &key,
                    format!("{other:?} is not supported yet (count, sum, mean, min, max are)"),
                );
                continue;
            }
        };
        let field = if field == "index_right" && native == "count" {
            "*"
        } else {
            field
        };
        let step = steps
            .iter()
            .position(|s| s.iter().all(|(_, f, _)| f != field));
        let entry = (output.clone(), field.to_owned(), native);
        match step {
            Some(i) => steps[i].push(entry),
            None => steps.push(vec![entry]),
        }
    }
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    for step in steps {
        let agg: serde_json::Map<String, Value> = step
            .iter()
            .map(|(_, field, function)| (field.clone(), json!(function)))
            .collect();
        out.main(
            "spatial_aggregate",
            params([
                ("ref_layer", json!(source)),
                ("predicate", json!(native_predicate)),
                ("agg", Value::Object(agg)),
            ]),
        );
        let mut renames = serde_json::Map::new();
        let mut zeros = serde_json::Map::new();
        for (output, field, function) in step {
            let produced = if field == "*" {
                "count".to_owned()
            } else {
                format!("{field}_{function}")
            };
            if produced != output {
                renames.insert(produced, json!(output));
            }
            if function == "sum" {
                zeros.insert(
                    output.clone(),
                    json!(format!("coalesce({}, 0)", ident(&output))),
                );
            }
        }
        if !renames.is_empty() {
            out.main("rename_field", params([("fields", Value::Object(renames))]));
        }
        if !zeros.is_empty() {
            out.main("calculate", params([("expressions", Value::Object(zeros))]));
        }
    }
}

fn overlay_intersection(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    overlay(args, scope, out, "overlay_intersection");
}

fn overlay_union(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    overlay(args, scope, out, "overlay_union");
}

/// GeoPandas' `overlay`: every reference attribute, names both layers have suffixed `_1` and
/// `_2`, only the input's geometry family kept (`keep_geom_type`, default true), invalid
/// polygons repaired.
fn overlay(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted, capability: &str) {
    let keep = args.bool("keep_geom_type").unwrap_or(true);
    let left = args.string("suffix_left").unwrap_or_else(|| "_1".into());
    let right = args.string("suffix_right").unwrap_or_else(|| "_2".into());
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    out.main(
        capability,
        params([
            ("ref_layer", json!(source)),
            ("keep_geom_type", json!(keep)),
            ("suffixes", json!([left, right])),
        ]),
    );
}

/// GISPulse's symmetric difference: each input feature against the reference layer's union.
fn symmetric_difference(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    out.main(
        "symmetric_difference",
        params([
            ("ref_layer", json!(source)),
            ("against", json!("union")),
            ("on_invalid", json!("error")),
        ]),
    );
}

/// GeoPandas' `sjoin_nearest` in `crs_meters` (both layers transformed, the result back): every
/// input feature with its nearest reference feature, `nn_distance`; beyond `max_distance` the
/// feature is dropped; `k` > 1 orders the rows by distance.
fn nearest_neighbor(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let k = args.integer("k").unwrap_or(1);
    if k < 1 {
        args.problem("k", "must be at least 1");
        return;
    }
    let max_distance = args.f64("max_distance");
    let field = args
        .string("distance_col")
        .unwrap_or_else(|| "nn_distance".into());
    let columns = match args.value("columns") {
        Some(Value::Array(names)) if names.is_empty() => {
            args.problem(
                "columns",
                "an empty list (no reference attributes) is not supported yet",
            );
            return;
        }
        Some(_) => args.names("columns").unwrap_or_default(),
        None => Vec::new(),
    };
    let crs = super::geometry::work_crs(args, scope);
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    args.note("nearest_neighbor: GISPulse returns every equally near feature, geomill one");
    let mut native = params([
        ("ref_layer", json!(source)),
        ("distance_field", json!(field)),
        ("work_crs", crs),
        ("suffixes", json!(["_left", "_right"])),
    ]);
    if !columns.is_empty() {
        native.insert("columns".into(), json!(columns));
    }
    if let Some(max) = max_distance {
        native.insert("max_distance".into(), json!(max));
    }
    out.main("nearest_neighbor", native);
    if max_distance.is_some() {
        out.keep_not_null(std::slice::from_ref(&field));
    }
    if k > 1 {
        out.sort_ascending(&[field]);
    }
}
