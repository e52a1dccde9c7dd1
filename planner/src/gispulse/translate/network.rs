//! GISPulse's network analyses that read its networkx graph onto the native options answering
//! over the same graph: `mst` and `connectivity_check` in the layer's own units (GISPulse
//! never reprojects for them), `shortest_path` between two points (reprojected by GISPulse
//! only when the lines are in longitude/latitude).

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "mst" => mst,
        "connectivity_check" => connectivity_check,
        "shortest_path" => shortest_path,
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

/// The path between the nodes nearest two points, one row per edge in path order (native
/// `origin_point` and `destination_point`); `crs_meters` only for lon/lat lines, as GISPulse.
fn shortest_path(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut point = |x: &str, y: &str| [args.f64(x).unwrap_or(0.0), args.f64(y).unwrap_or(0.0)];
    let from = point("start_x", "start_y");
    let to = point("end_x", "end_y");
    let crs = args
        .string("crs_meters")
        .map_or_else(|| "EPSG:3857".to_owned(), |c| c.replacen("epsg:", "EPSG:", 1));
    let mut native = params([
        ("origin_point", json!(from)),
        ("destination_point", json!(to)),
        ("work_crs", json!(format!("angular:{crs}"))),
    ]);
    if let Some(weight) = args.string("weight_col") {
        native.insert("cost_field".into(), json!(weight));
    }
    args.note("of equal-cost paths geomill gives the one Dijkstra from the start settles first, networkx's bidirectional search may give another; an empty network is an error in GISPulse, no rows here");
    out.main("shortest_path", native);
}
