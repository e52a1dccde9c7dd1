//! GISPulse's point-cloud capabilities onto the native ones (their parameters are the native
//! ones, `null` meaning not given).

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator, params, reference_layer};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "pointcloud_filter_classification" => filter_classification,
        "pointcloud_zonal_height" => zonal_height,
        "pointcloud_grid_summary" => grid_summary,
        "pointcloud_load_las" => load_las,
        _ => return None,
    })
}

/// The parameters of `keys` that are given and not `null` (GISPulse's `null` is its default).
fn given(args: &mut Args<'_>, keys: &[&str]) -> Map<String, Value> {
    let mut native = Map::new();
    for key in keys {
        if let Some(value) = args.value(key)
            && !value.is_null()
        {
            native.insert((*key).to_owned(), value.clone());
        }
    }
    native
}

fn filter_classification(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let native = given(args, &["keep", "drop", "col"]);
    out.main("pointcloud_filter_classification", native);
}

/// The native step, then GISPulse's NaN count for a polygon without points (its statistics
/// are a left join, the count included): NULL where the count is 0.
fn zonal_height(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let mut native = given(args, &["stats", "prefix", "ground_col"]);
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    native.insert("ref_layer".into(), json!(source));
    let prefix = native
        .get("prefix")
        .and_then(Value::as_str)
        .unwrap_or("z_")
        .to_owned();
    let counted = match native.get("stats").and_then(Value::as_array) {
        Some(stats) if !stats.is_empty() => stats.iter().any(|s| s == "count"),
        _ => true,
    };
    out.main("pointcloud_zonal_height", native);
    if counted {
        let count = format!("{prefix}count");
        let column = ident(&count);
        out.main(
            "calculate",
            params([(
                "expressions",
                json!({ count: format!("CASE WHEN {column} = 0 THEN NULL ELSE {column} END") }),
            )]),
        );
    }
}

/// `drop_empty` has no effect in GISPulse (only occupied cells are made): read and ignored.
fn grid_summary(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let native = given(args, &["cell_size", "stats"]);
    args.value("drop_empty");
    out.main("pointcloud_grid_summary", native);
}

/// A source: `path` names the point-cloud dataset uploaded from that file (`scan.laz`: the
/// dataset `scan.laz`, whose layer is `scan`); GISPulse's columns.
fn load_las(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(path) = args.string("path").filter(|p| !p.is_empty()) else {
        args.problem(
            "path",
            "pointcloud_load_las requires 'path' (the point-cloud dataset)",
        );
        return;
    };
    let mut native = given(args, &["classifications", "max_points", "crs"]);
    native.insert("columns".into(), json!("gispulse"));
    out.main_from(&(scope.reference)(&path));
    out.main("pointcloud_load_las", native);
}
