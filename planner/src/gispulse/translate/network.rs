//! GISPulse's network analyses that read its networkx graph onto the native options answering
//! over the same graph: `mst` and `connectivity_check` in the layer's own units (GISPulse
//! never reprojects for them), `shortest_path` between two points (reprojected by GISPulse
//! only when the lines are in longitude/latitude), `isochrone` from a point (never
//! reprojected), `od_matrix` between every two rows of the reference layer (never
//! reprojected), `network_allocation` of the input's points to hubs (layers named in the
//! document, reprojected when in longitude/latitude).

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "mst" => mst,
        "connectivity_check" => connectivity_check,
        "shortest_path" => shortest_path,
        "isochrone" => isochrone,
        "od_matrix" => od_matrix,
        "network_allocation" => network_allocation,
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
    let crs = args.string("crs_meters").map_or_else(
        || "EPSG:3857".to_owned(),
        |c| c.replacen("epsg:", "EPSG:", 1),
    );
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

/// What the network reaches from the node nearest a point (GISPulse's point mode, in the
/// lines' own units): one row per budget, the union of the reached edges buffered by
/// `max(edge_buffer_m, 1)` with `cost_budget`; or, with `dissolve: false`, the reached edges
/// with their own `cost` (native `origin_point`, `output: buffers | edges`).
fn isochrone(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if args.has("ref_layer") {
        args.problem(
            "ref_layer",
            "the batch mode (sources in the step's input, the network in ref_layer) is not supported yet: give start_x and start_y over the network",
        );
        return;
    }
    let from = [
        args.f64("start_x").unwrap_or(0.0),
        args.f64("start_y").unwrap_or(0.0),
    ];
    let mut budgets: Vec<f64> = match args.value("cost_budgets") {
        Some(serde_json::Value::Array(items)) if !items.is_empty() => {
            items.iter().filter_map(serde_json::Value::as_f64).collect()
        }
        _ => vec![args.f64("cost_budget").unwrap_or(1000.0)],
    };
    budgets.sort_by(f64::total_cmp);
    budgets.dedup();
    if budgets.iter().any(|b| *b < 0.0) {
        args.problem("cost_budget", "must be at least 0");
        return;
    }
    let dissolve = args.bool("dissolve").unwrap_or(true);
    if args.has("cost_budgets") && !dissolve {
        args.problem(
            "dissolve",
            "cost_budgets needs dissolve true (GISPulse refuses it)",
        );
        return;
    }
    let buffer = args.f64("edge_buffer_m").unwrap_or(30.0).max(1.0);
    args.value("crs_meters");
    args.note("GISPulse's point mode never reprojects: costs and the buffer are in the lines' own units, crs_meters is not read");
    let mut native = params([
        ("origin_point", json!(from)),
        ("bands", json!(budgets)),
        ("output", json!(if dissolve { "buffers" } else { "edges" })),
    ]);
    if dissolve {
        native.insert("buffer".into(), json!(buffer));
    } else {
        args.value("edge_buffer_m");
    }
    if let Some(weight) = args.string("weight_col") {
        native.insert("cost_field".into(), json!(weight));
    }
    out.main("isochrone", native);
    if dissolve {
        out.main(
            "rename_field",
            params([("fields", json!({"cost": "cost_budget"}))]),
        );
    }
}

/// The symmetric matrix between every two rows of `ref_layer` over the network, in the lines'
/// own units (native `points`, `point_id`, `max_cost`, `include_missing`); ids by the rows'
/// positions unless `origin_id_col` is given.
fn od_matrix(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    if !args.is_null("destinations_layer") && args.has("destinations_layer") {
        args.problem(
            "destinations_layer",
            "GISPulse's documents cannot hand it a destinations layer: the matrix is the reference layer's with itself",
        );
        return;
    }
    let Some(points) = super::reference_layer(args, scope, out, false) else {
        return;
    };
    let origin_id = args.string("origin_id_col");
    let destination_id = args.string("destination_id_col");
    if origin_id.as_deref().unwrap_or("id") != destination_id.as_deref().unwrap_or("id") {
        args.problem(
            "destination_id_col",
            "must name the same field as origin_id_col: origins and destinations are one layer",
        );
        return;
    }
    let mut native = params([("points", json!(points))]);
    match origin_id {
        Some(id) => {
            native.insert("point_id".into(), json!(id));
        }
        None => args.note("od_matrix: rows are named by position (GISPulse names them by a field called id when the reference layer has one: give origin_id_col)"),
    }
    if let Some(weight) = args.string("weight_col") {
        native.insert("cost_field".into(), json!(weight));
    }
    if let Some(limit) = args.f64("max_distance") {
        native.insert("max_cost".into(), json!(limit));
    }
    if args.bool("include_missing").unwrap_or(false) {
        native.insert("include_missing".into(), json!(true));
    }
    args.note("od_matrix: each path's edges are merged into one line, each edge turned to start at the node it leaves (GISPulse compares the edge's first vertex with the node rounded to 6 decimals and reverses almost every edge); a NULL or empty reference geometry has no node here (no path), where GISPulse fails");
    out.main("od_matrix", native);
    out.columns_as(
        json!({"origin_id": "\"origin\"", "destination_id": "\"destination\"", "n_edges": "\"edges\""}),
        &["origin_id", "destination_id", "cost", "n_edges"],
    );
}

/// GISPulse's `network_allocation` with its network and hubs named as layers: GISPulse itself
/// takes them only as in-memory GeoDataFrames (`network_gdf`, `hubs_gdf`) that no document can
/// give, so geomill reads those two parameters as the names of reference layers or steps.
/// Native `network` mode: the layers in `crs_meters` (EPSG:3857 by default) when in
/// longitude/latitude, as GISPulse reprojects each angular layer; hubs by `hub_id_col` (`id`);
/// the answer's `allocated_hub_id`, `allocation_cost` and `allocated`.
fn network_allocation(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let layer = |args: &mut Args<'_>, key: &str| match args.string(key) {
        Some(name) => Some((scope.reference)(&name)),
        None => {
            args.problem(
                key,
                "name the layer (a ref_layers entry or a step): GISPulse 2.2.3 takes it only as an in-memory GeoDataFrame, geomill by name",
            );
            None
        }
    };
    let network = layer(args, "network_gdf");
    let hubs = layer(args, "hubs_gdf");
    let hub_id = args.string("hub_id_col").unwrap_or_else(|| "id".into());
    let max_cost = args.f64("max_cost");
    let weight = args.string("weight_col");
    let crs = args.string("crs_meters").map_or_else(
        || "EPSG:3857".to_owned(),
        |c| c.replacen("epsg:", "EPSG:", 1),
    );
    let (Some(network), Some(hubs)) = (network, hubs) else {
        return;
    };
    let mut in_crs = |source: &str| {
        out.side(
            "reproject",
            params([("to", json!(crs)), ("only_lon_lat", json!(true))]),
            source,
        )
    };
    let network = in_crs(&network);
    let hubs = in_crs(&hubs);
    let mut native = params([
        ("network", json!(network)),
        ("facilities", json!(hubs)),
        ("facility_id", json!(hub_id)),
        ("work_crs", json!(format!("angular:{crs}"))),
    ]);
    if let Some(limit) = max_cost {
        native.insert("max_cost".into(), json!(limit));
    }
    if let Some(weight) = weight {
        native.insert("cost_field".into(), json!(weight));
    }
    args.note("network_allocation: a hubs layer without hub_id_col is refused here, where GISPulse names each hub by its row position; a hub of another geometry than a point sits at its centroid here, where GISPulse fails; network lines of NULL or negative weight_col are left out of the graph");
    out.main("network_allocation", native);
    out.main(
        "rename_field",
        params([(
            "fields",
            json!({"facility": "allocated_hub_id", "cost": "allocation_cost"}),
        )]),
    );
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({"allocated": "\"allocation_cost\" IS NOT NULL"}),
        )]),
    );
}
