//! GISPulse's line network cleaning that answers a new table of the whole layer's pieces
//! (`network_remove_pseudo_nodes`: GEOS's LineMerger; `network_node_lines`: GEOS's union),
//! onto the native steps of the same names with `pieces: true`, in `crs_meters` (none when
//! null).

use serde_json::{Map, Value, json};

use super::geometry::work_crs;
use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "network_remove_pseudo_nodes" => network_remove_pseudo_nodes,
        "network_node_lines" => network_node_lines,
        _ => return None,
    })
}

fn network_remove_pseudo_nodes(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let native = pieces(args, scope);
    out.main("network_remove_pseudo_nodes", native);
}

fn network_node_lines(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let native = pieces(args, scope);
    out.main("network_node_lines", native);
}

/// `pieces: true`, in `crs_meters` unless it is null.
fn pieces(args: &mut Args<'_>, scope: &Scope<'_>) -> Map<String, Value> {
    let mut native = params([("pieces", json!(true))]);
    if args.value("crs_meters").is_some_and(Value::is_null) {
        args.note("works in the layer's own CRS (GISPulse's crs_meters: null)");
    } else {
        native.insert("work_crs".into(), work_crs(args, scope));
    }
    args.note("the pieces are numbered in GEOS's order: GEOS versions may list them differently");
    native
}
