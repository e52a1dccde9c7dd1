//! GISPulse's line network cleaning onto the native steps of the same names, in `crs_meters`
//! (none when null): the new table of the whole layer's pieces (`network_remove_pseudo_nodes`:
//! GEOS's LineMerger; `network_node_lines`: GEOS's union) with `pieces: true`, and GISPulse's
//! rules for snapping ends (`rule: grid_buckets`), closing gaps (`method: nearest_point`) and
//! dropping duplicates (`rule: first_in_row_order`).

use serde_json::{Map, Value, json};

use super::geometry::work_crs;
use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "network_remove_pseudo_nodes" => network_remove_pseudo_nodes,
        "network_node_lines" => network_node_lines,
        "network_snap_endpoints" => network_snap_endpoints,
        "network_extend_dangles" => network_extend_dangles,
        "network_remove_duplicates" => network_remove_duplicates,
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

fn network_snap_endpoints(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("tolerance").unwrap_or(0.5);
    let mut native = params([
        ("tolerance", json!(tolerance)),
        ("rule", json!("grid_buckets")),
    ]);
    in_crs_meters(&mut native, args, scope);
    args.note("the bucket means are sums left to right, as Python 3.11's sum adds (3.12's compensated sum may differ in the last digit)");
    out.main("network_snap_endpoints", native);
}

fn network_extend_dangles(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("tolerance").unwrap_or(1.0);
    let mut native = params([
        ("max_distance", json!(tolerance)),
        ("method", json!("nearest_point")),
    ]);
    in_crs_meters(&mut native, args, scope);
    args.note(
        "equally near features: the nearest point first by x then y (GISPulse: its R-tree's order)",
    );
    out.main("network_extend_dangles", native);
}

fn network_remove_duplicates(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("tolerance").unwrap_or(0.01);
    let mut native = params([
        ("tolerance", json!(tolerance)),
        ("rule", json!("first_in_row_order")),
    ]);
    in_crs_meters(&mut native, args, scope);
    out.main("network_remove_duplicates", native);
}

/// `pieces: true`, in `crs_meters` unless it is null.
fn pieces(args: &mut Args<'_>, scope: &Scope<'_>) -> Map<String, Value> {
    let mut native = params([("pieces", json!(true))]);
    in_crs_meters(&mut native, args, scope);
    args.note("the pieces are numbered in GEOS's order: GEOS versions may list them differently");
    native
}

/// `work_crs` from `crs_meters` (EPSG:3857 when absent), none when it is null.
fn in_crs_meters(native: &mut Map<String, Value>, args: &mut Args<'_>, scope: &Scope<'_>) {
    if args.is_null("crs_meters") {
        args.note("works in the layer's own CRS (GISPulse's crs_meters: null)");
    } else {
        native.insert("work_crs".into(), work_crs(args, scope));
    }
}
