//! GISPulse's `spatial_weights` onto the native one: each feature's neighbour count in
//! `{col_prefix}_n_neighbours`, k nearest and distance bands over the centroids in
//! `crs_meters`, contiguity in the layer's own CRS.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "spatial_weights" => spatial_weights,
        _ => return None,
    })
}

fn spatial_weights(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let method = args.string("method").unwrap_or_else(|| "queen".into());
    let k = args.integer("k").unwrap_or(8);
    if !(1..=1000).contains(&k) {
        args.problem("k", "must be from 1 to 1000");
        return;
    }
    let prefix = args.string("col_prefix").unwrap_or_else(|| "w".into());
    let mut native = params([
        ("method", json!(method)),
        ("field", json!(format!("{prefix}_n_neighbours"))),
    ]);
    match method.as_str() {
        "queen" | "rook" => {
            args.value("crs_meters");
            args.value("threshold");
            args.note("spatial_weights queen/rook: PySAL's contiguity (a shared vertex, a shared edge); GISPulse's queen takes any intersection, its rook a shared boundary longer than 1e-9");
        }
        "knn" | "distance_band" => {
            native.insert("work_crs".into(), super::geometry::work_crs(args, scope));
            native.insert("unit".into(), json!("crs"));
            if method == "knn" {
                native.insert("k".into(), json!(k));
            } else {
                let Some(threshold) = args.f64("threshold").filter(|t| *t > 0.0) else {
                    args.problem("threshold", "distance_band needs a threshold above 0");
                    return;
                };
                native.insert("distance".into(), json!(threshold));
            }
        }
        other => {
            args.problem(
                "method",
                format!("{other:?}: expected queen, rook, knn or distance_band"),
            );
            return;
        }
    }
    out.main("spatial_weights", native);
}
