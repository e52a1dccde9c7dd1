//! GISPulse's `topology_check` and `duplicate_geometry` onto the native reports with Shapely's
//! predicates and the first-in-row-order rule, features named by `id_col` or else by their
//! row position (GISPulse's fresh pandas index), the report's columns renamed as GISPulse's.

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "topology_check" => topology_check,
        "duplicate_geometry" => duplicate_geometry,
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
    out.main(
        "calculate",
        params([(
            "expressions",
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
        )]),
    );
    out.main(
        "select_columns",
        params([("fields", json!(["feature_id", "issue_type", "description"]))]),
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
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({"feature_id": "\"feature\"", "duplicate_of": "\"related\""}),
        )]),
    );
    out.main(
        "select_columns",
        params([("fields", json!(["feature_id", "duplicate_of"]))]),
    );
}
