//! GISPulse's graph tools onto the native ones: the parts of a line layer linked at end points
//! (`connected_components`), lines cut at points (`split_lines_at_points`), the graph as a
//! table (`build_network_graph`), lines cut where they meet (`planarize`), points snapped
//! onto lines (`snap_points_to_lines`), a Steiner tree of terminals (`steiner_tree`),
//! communities (`community_detection`).

use serde_json::{Map, Value, json};

use super::super::document::Form;
use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "connected_components" => connected_components,
        "split_lines_at_points" => split_lines_at_points,
        "build_network_graph" => build_network_graph,
        "planarize" => planarize,
        "snap_points_to_lines" => snap_points_to_lines,
        "steiner_tree" => steiner_tree,
        "community_detection" => community_detection,
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

/// The CRS a tool that always reprojects works in: `crs_meters`, else EPSG:3857 in rules
/// files; a pipeline's choice by the data (UTM or Lambert-93 for longitude/latitude) is asked
/// for explicitly (`None`, with a problem).
fn always_crs(args: &mut Args<'_>, scope: &Scope<'_>) -> Option<String> {
    match args.string("crs_meters") {
        Some(crs) => Some(crs.replacen("epsg:", "EPSG:", 1)),
        None if scope.form == Form::RulesV1 => Some("EPSG:3857".into()),
        None => {
            args.problem(
                "crs_meters",
                "give it: GISPulse v2 chooses it from the data (UTM or Lambert-93 on lon/lat, EPSG:3857 otherwise), which is not translated",
            );
            None
        }
    }
}

/// The lines (in `crs_meters`) cut where the reference points (reprojected there by a side
/// step) lie within `tolerance_m`, each piece with its line's id (`id_col`, else its row
/// position) in `parent_id_col`.
fn split_lines_at_points(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("tolerance_m").unwrap_or(0.0);
    if tolerance < 0.0 {
        args.problem("tolerance_m", "must be 0 or more");
        return;
    }
    let Some(points) = super::reference_layer(args, scope, out, false) else {
        return;
    };
    let Some(crs) = always_crs(args, scope) else {
        return;
    };
    let points = out.side("reproject", params([("to", json!(crs))]), &points);
    let mut native = params([
        ("ref_layer", json!(points)),
        ("tolerance", json!(tolerance)),
        ("unit", json!("crs")),
        (
            "parent_field",
            json!(
                args.string("parent_id_col")
                    .unwrap_or_else(|| "parent_edge_id".into())
            ),
        ),
        ("work_crs", json!(crs)),
    ]);
    if let Some(id) = args.string("id_col") {
        native.insert("id_field".into(), json!(id));
    }
    args.note("a multi-part line's pieces keep its id (GISPulse appends #k, the part's position); NULL and empty lines are dropped even without reference points (GISPulse then keeps every row)");
    out.main("split_lines_at_points", native);
}

/// The CRS a tool that reprojects only longitude/latitude data works in: `crs_meters`, else
/// EPSG:3857 in rules files and GISPulse v2's choice by the data in pipelines.
fn angular_crs(args: &mut Args<'_>, scope: &Scope<'_>) -> Value {
    match (args.string("crs_meters"), scope.form) {
        (Some(crs), _) => json!(format!("angular:{}", crs.replacen("epsg:", "EPSG:", 1))),
        (None, Form::RulesV1) => json!("angular:EPSG:3857"),
        (None, Form::PipelineV2) => json!("auto:angular"),
    }
}

/// The nodes (ends rounded to 6 decimals or within `snap_tolerance_m`) and edges of the lines,
/// built in `crs_meters` for longitude/latitude data: the native table is GISPulse's.
fn build_network_graph(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("snap_tolerance_m").unwrap_or(0.0).max(0.0);
    let mut native = params([
        ("tolerance", json!(tolerance)),
        ("unit", json!("crs")),
        ("work_crs", angular_crs(args, scope)),
    ]);
    for (theirs, ours) in [("id_col", "id_field"), ("weight_col", "weight_field")] {
        if let Some(field) = args.string(theirs) {
            native.insert(ours.into(), json!(field));
        }
    }
    args.note("a multi-part line's edges keep its id (GISPulse appends #k, the part's position)");
    out.main("build_network_graph", native);
}

/// The lines cut wherever they meet, in `crs_meters` (EPSG:3857 by default, projected data
/// too), ends joined at 6 decimals or within `snap_tolerance_m`: the native table is GISPulse's.
fn planarize(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("snap_tolerance_m").unwrap_or(0.0).max(0.0);
    let mut native = params([
        ("tolerance", json!(tolerance)),
        ("unit", json!("crs")),
        ("work_crs", super::geometry::work_crs(args, scope)),
    ]);
    if let Some(id) = args.string("id_col") {
        native.insert("id_field".into(), json!(id));
    }
    args.note("a multi-part line's pieces keep its id (GISPulse appends #k, the part's position)");
    out.main("planarize", native);
}

/// The points snapped in `crs_meters` onto the reference lines (reprojected there by a side
/// step): the native candidates and ranks are GISPulse's.
fn snap_points_to_lines(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(id) = args.string("ref_id_col") else {
        args.problem("ref_id_col", "names the lines' id column and is required");
        return;
    };
    let k = args.integer("k").unwrap_or(1);
    if k < 1 {
        args.problem("k", "must be at least 1");
        return;
    }
    let Some(lines) = super::reference_layer(args, scope, out, false) else {
        return;
    };
    let Some(crs) = always_crs(args, scope) else {
        return;
    };
    let lines = out.side("reproject", params([("to", json!(crs))]), &lines);
    let mut native = params([
        ("ref_layer", json!(lines)),
        ("ref_id_field", json!(id)),
        ("k", json!(k)),
        ("unit", json!("crs")),
        ("work_crs", json!(crs)),
    ]);
    if let Some(max) = args.f64("max_distance_m") {
        native.insert("max_distance".into(), json!(max));
    }
    for (theirs, ours, default) in [
        ("edge_id_col", "edge_id_field", "edge_id"),
        ("measure_col", "measure_field", "measure"),
        ("offset_col", "offset_field", "offset_distance"),
        ("snapped_col", "snapped_field", "snapped"),
        ("rank_col", "rank_field", "rank"),
    ] {
        let name = args.string(theirs).unwrap_or_else(|| default.into());
        native.insert(ours.into(), json!(name));
    }
    out.main("snap_points_to_lines", native);
}

/// Mehlhorn's Steiner tree (networkx's default) of the terminals over the network, both in
/// `crs_meters` when the network is in longitude/latitude: the native tree is networkx's.
fn steiner_tree(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(terminals) = super::reference_layer(args, scope, out, false) else {
        return;
    };
    let crs = match (args.string("crs_meters"), scope.form) {
        (Some(crs), _) => crs.replacen("epsg:", "EPSG:", 1),
        (None, Form::RulesV1) => "EPSG:3857".into(),
        (None, Form::PipelineV2) => {
            args.problem("crs_meters", "give it: GISPulse v2 chooses it from the data (UTM or Lambert-93 on lon/lat), which is not translated");
            return;
        }
    };
    let terminals = out.side(
        "reproject",
        params([("to", json!(crs)), ("only_lon_lat", json!(true))]),
        &terminals,
    );
    let mut native = params([
        ("ref_layer", json!(terminals)),
        ("work_crs", json!(format!("angular:{crs}"))),
    ]);
    if let Some(weight) = args.string("weight_col") {
        native.insert("weight_field".into(), json!(weight));
    }
    args.note("the tree is networkx's Mehlhorn approximation (networkx 3.3 and later; earlier versions default to Kou's); networks with parts holding no terminal work here, where networkx 3.3+ fails");
    out.main("steiner_tree", native);
}

/// Greedy modularity communities of the network (lengths in `crs_meters` for
/// longitude/latitude lines): the native merges are networkx's. GISPulse's default, Louvain,
/// draws its node order from Python's `random` seeded 42, which is not reproduced.
fn community_detection(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let method = args.string("method").unwrap_or_else(|| "louvain".into());
    if method != "greedy_modularity" {
        args.problem(
            "method",
            format!("{method:?} is not supported yet (greedy_modularity is: networkx's Louvain and label propagation depend on Python's random and set orders)"),
        );
        return;
    }
    let mut native = params([
        ("method", json!("greedy_modularity")),
        (
            "output",
            json!(
                args.string("community_col")
                    .unwrap_or_else(|| "community_id".into())
            ),
        ),
        ("work_crs", angular_crs(args, scope)),
    ]);
    if let Some(weight) = args.string("weight_col") {
        native.insert("weight_field".into(), json!(weight));
    }
    out.main("community_detection", native);
}
