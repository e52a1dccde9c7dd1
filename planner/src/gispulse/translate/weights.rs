//! GISPulse's spatial weights onto the native ones: `spatial_weights`' neighbour count in
//! `{col_prefix}_n_neighbours`, and `morans_i`'s one-row summary of the global statistic; k
//! nearest and distance bands over the centroids in `crs_meters`, contiguity in the layer's
//! own CRS, rows standardised.

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator, params};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "spatial_weights" => spatial_weights,
        "morans_i" => morans_i,
        "getis_ord_g" => getis_ord_g,
        _ => return None,
    })
}

fn spatial_weights(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let prefix = args.string("col_prefix").unwrap_or_else(|| "w".into());
    let Some(mut native) = weights(args, scope) else {
        return;
    };
    native.insert("field".into(), json!(format!("{prefix}_n_neighbours")));
    out.main("spatial_weights", native);
}

/// The native step fields `morans_i` uses for a moment.
const NEIGHBOURS: &str = "__gispulse_neighbours";
const MORAN: &str = "__gispulse_moran";

/// Global Moran's I of `field` over GISPulse's row-standardised contiguity weights, as one
/// row: `morans_i`, `expected_i`, `n`, `n_neighbours_avg` and the union of the geometries
/// (native `spatial_weights`, `morans_i`, then `dissolve`); without permutations `z_score` and
/// `p_value` are NULL, as GISPulse gives them.
fn morans_i(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field").filter(|f| !f.is_empty()) else {
        args.problem("field", "is required");
        return;
    };
    if args.integer("permutations").unwrap_or(999) != 0 {
        args.problem(
            "permutations",
            "GISPulse's permutations (NumPy's PCG64 generator seeded 42) are not reproduced yet: give permutations: 0 (z_score and p_value then NULL, as GISPulse gives them)",
        );
        return;
    }
    let Some(native) = weights(args, scope) else {
        return;
    };
    if native.contains_key("work_crs") {
        args.problem(
            "method",
            "k nearest and distance bands (in crs_meters) are not supported yet for morans_i (queen and rook are)",
        );
        return;
    }
    let mut counted = native.clone();
    counted.insert("field".into(), json!(NEIGHBOURS));
    out.main("spatial_weights", counted);
    let mut moran = native;
    moran.insert("field".into(), json!(field));
    moran.insert("permutations".into(), json!(0));
    moran.insert("output".into(), json!(MORAN));
    out.main("morans_i", moran);
    let global = |name: &str| format!("{MORAN}_global_{name}");
    out.main(
        "dissolve",
        params([(
            "aggregates",
            json!({
                global("i"): "first",
                global("expected"): "first",
                NEIGHBOURS: "avg",
                field.clone(): "count",
            }),
        )]),
    );
    let first = |name: &str| ident(&format!("{}_first", global(name)));
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({
                "morans_i": first("i"),
                "expected_i": first("expected"),
                "z_score": "CAST(NULL AS FLOAT8)",
                "p_value": "CAST(NULL AS FLOAT8)",
                "n": ident(&format!("{field}_count")),
                "n_neighbours_avg": ident(&format!("{NEIGHBOURS}_avg")),
            }),
        )]),
    );
    out.main(
        "select_columns",
        params([(
            "fields",
            json!([
                "morans_i",
                "expected_i",
                "z_score",
                "p_value",
                "n",
                "n_neighbours_avg"
            ]),
        )]),
    );
}

/// The native step fields `getis_ord_g` reads its answer from, then drops.
const GI: &str = "__gispulse_gi";
const GI_FIELDS: &[&str] = &[
    "g",
    "z",
    "p_norm",
    "p_sim",
    "global_g",
    "global_expected",
    "global_variance",
    "global_z",
    "global_p_norm",
    "global_p_sim",
];

/// GISPulse's Getis–Ord Gi* per feature over binary contiguity weights, each feature its own
/// neighbour (native `local_weights: binary`): `gi_star`, `z_score`, the two-sided normal
/// `p_value` and `hotspot_label` (`hot`, `cold`, `not_significant` at 5 %).
fn getis_ord_g(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field").filter(|f| !f.is_empty()) else {
        args.problem("field", "is required");
        return;
    };
    if args.bool("include_self") == Some(false) {
        args.problem(
            "include_self",
            "Gi without the feature itself is not supported yet (GISPulse keeps its mean and spread over every feature, esda over the others)",
        );
        return;
    }
    let Some(mut native) = weights(args, scope) else {
        return;
    };
    if native.contains_key("work_crs") {
        args.problem(
            "method",
            "k nearest and distance bands (in crs_meters) are not supported yet for getis_ord_g (queen and rook are)",
        );
        return;
    }
    for (key, value) in [
        ("field", json!(field)),
        ("star", json!(true)),
        ("local_weights", json!("binary")),
        ("permutations", json!(0)),
        ("output", json!(GI)),
    ] {
        native.insert(key.into(), value);
    }
    out.main("getis_ord_g", native);
    let at = |name: &str| ident(&format!("{GI}_{name}"));
    let (z, p) = (at("z"), format!("2 * {}", at("p_norm")));
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({
                "gi_star": at("g"),
                "z_score": z,
                "p_value": p,
                "hotspot_label": format!("CASE WHEN {z} IS NULL OR {z} = CAST('NaN' AS FLOAT8) OR {p} >= 0.05 THEN 'not_significant' WHEN {z} > 0 THEN 'hot' ELSE 'cold' END"),
            }),
        )]),
    );
    let dropped: Vec<String> = GI_FIELDS.iter().map(|f| format!("{GI}_{f}")).collect();
    out.main("drop_field", params([("fields", json!(dropped))]));
}

/// GISPulse's weights (`method`, `k`, `threshold`, `crs_meters`) as native weights parameters;
/// `None` with a problem when they cannot be.
fn weights(args: &mut Args<'_>, scope: &Scope<'_>) -> Option<Map<String, Value>> {
    let method = args.string("method").unwrap_or_else(|| "queen".into());
    let k = args.integer("k").unwrap_or(8);
    if !(1..=1000).contains(&k) {
        args.problem("k", "must be from 1 to 1000");
        return None;
    }
    let mut native = params([("method", json!(method))]);
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
                    return None;
                };
                native.insert("distance".into(), json!(threshold));
            }
        }
        other => {
            args.problem(
                "method",
                format!("{other:?}: expected queen, rook, knn or distance_band"),
            );
            return None;
        }
    }
    Some(native)
}
