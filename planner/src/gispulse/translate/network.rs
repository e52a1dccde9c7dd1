//! GISPulse's network analyses that read its networkx graph in the layer's own units (`mst`,
//! `connectivity_check`: GISPulse never reprojects for them) onto the native options answering
//! over the same graph.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "mst" => mst,
        "connectivity_check" => connectivity_check,
        _ => return None,
    })
}

/// The lines' minimum spanning forest as networkx's Kruskal finds it: rows `u`, `v`,
/// `weight` (native `of: edges`).
fn mst(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = params([("of", json!("edges"))]);
    if let Some(weight) = args.string("weight_col") {
        native.insert("cost_field".into(), json!(weight));
    }
    args.note("GISPulse returns an empty input as it is (its own columns), geomill an empty table of u, v and weight; lines of NULL or negative weight are left out here, where GISPulse fails on NaN weights");
    out.main("mst", native);
}

/// One row of the network's statistics, or with `return_components` a row per connected
/// part (native `output: summary` or `components`).
fn connectivity_check(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let per_component = args.bool("return_components").unwrap_or(false);
    let mut native = params([(
        "output",
        json!(if per_component {
            "components"
        } else {
            "summary"
        }),
    )]);
    if let Some(weight) = args.string("weight_col") {
        args.note("lines of NULL or negative weight_col are left out of the graph here; GISPulse keeps them");
        native.insert("cost_field".into(), json!(weight));
    }
    out.main("connectivity_check", native);
}
