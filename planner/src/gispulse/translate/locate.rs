//! `line_locate_point` as GISPulse answers it: each feature (a non-point by its centroid)
//! located along its nearest reference line in `crs_meters`, the distance along it (or its
//! fraction, `normalized`) and the line's 0-based position, `-1` when nothing was found.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params, reference_layer};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "line_locate_point" => line_locate_point,
        _ => return None,
    })
}

/// The native search's own fields GISPulse does not give: named here, then dropped.
const DISTANCE: &str = "__gispulse_distance";
const FRACTION: &str = "__gispulse_fraction";

fn line_locate_point(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let normalized = args.bool("normalized").unwrap_or(false);
    let measure = args
        .string("measure_col")
        .unwrap_or_else(|| "measure".into());
    let index = args
        .string("ref_index_col")
        .unwrap_or_else(|| "ref_index".into());
    if measure == index {
        args.problem("ref_index_col", "must differ from measure_col");
        return;
    }
    let crs = super::geometry::work_crs(args, scope);
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    args.note("line_locate_point: GISPulse searches first among the lines whose box meets a 1 m box around the point (the nearest line of all only when none does) and measures a MultiLineString along its parts in order; geomill takes the nearest line of all and locates along a MultiLineString merged into one line (NULL when its parts do not join)");
    let mut native = params([
        ("ref_layer", json!(source)),
        ("columns", json!([])),
        ("distance_field", json!(DISTANCE)),
        ("line_index_field", json!(index)),
        ("centroids", json!(true)),
        ("work_crs", crs),
    ]);
    let mut dropped = vec![DISTANCE];
    if normalized {
        native.insert("fraction_field".into(), json!(measure));
    } else {
        native.insert("fraction_field".into(), json!(FRACTION));
        native.insert("measure_field".into(), json!(measure));
        dropped.push(FRACTION);
    }
    out.main("line_locate_point", native);
    out.main("drop_field", params([("fields", json!(dropped))]));
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({index.clone(): format!("coalesce({}, -1)", ident(&index))}),
        )]),
    );
}
