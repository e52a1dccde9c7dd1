//! GISPulse's graph tools onto the native ones: the parts of a line layer linked at end points
//! (`connected_components`).

use serde_json::{Map, Value, json};

use super::super::document::Form;
use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "connected_components" => connected_components,
        _ => return None,
    })
}

/// The CRS a graph tool measures its tolerance in when GISPulse reprojects only on request:
/// the given `crs_meters`; none given, none in rules files, and in pipelines GISPulse v2's
/// choice for longitude/latitude data (`auto:angular`).
fn requested_crs(args: &mut Args<'_>, scope: &Scope<'_>) -> Value {
    match args.string("crs_meters") {
        Some(crs) => json!(crs.replacen("epsg:", "EPSG:", 1)),
        None => match scope.form {
            Form::RulesV1 => Value::Null,
            Form::PipelineV2 => json!("auto:angular"),
        },
    }
}

/// `work_crs` set to `crs` when there is one.
fn with_crs(native: &mut Map<String, Value>, crs: Value) {
    if !crs.is_null() {
        native.insert("work_crs".into(), crs);
    }
}

/// Rows linked at end points (rounded to 6 decimals, or within `snap_tolerance_m` in
/// `crs_meters` units), parts numbered by their row counts: the native capability's own rule.
fn connected_components(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("snap_tolerance_m").unwrap_or(0.0).max(0.0);
    let component = args
        .string("component_col")
        .unwrap_or_else(|| "component_id".into());
    let size = args
        .string("size_col")
        .unwrap_or_else(|| "component_size".into());
    let mut native = params([
        ("tolerance", json!(tolerance)),
        ("unit", json!("crs")),
        ("component_field", json!(component)),
        ("size_field", json!(size)),
    ]);
    if tolerance > 0.0 {
        with_crs(&mut native, requested_crs(args, scope));
    }
    out.main("connected_components", native);
}
