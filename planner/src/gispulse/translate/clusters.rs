//! GISPulse's clustering onto the native one: DBSCAN over the centroids in `crs_meters`
//! (EPSG:3857 in rules files), `eps` in that CRS's units, the labels in `cluster_col`; ST-DBSCAN
//! with its time window in seconds; DBSCAN along a line network; HDBSCAN with its
//! probabilities.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "cluster_dbscan" => cluster_dbscan,
        "cluster_st_dbscan" => cluster_st_dbscan,
        "cluster_network_dbscan" => cluster_network_dbscan,
        "cluster_hdbscan" => cluster_hdbscan,
        "cluster_kmeans" => cluster_kmeans,
        _ => return None,
    })
}

/// scikit-learn's `DBSCAN` of the centroids in `crs_meters` (`eps` default 100, `min_samples`
/// 5): the native kernel gives the same labels.
fn cluster_dbscan(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let eps = args.f64("eps").unwrap_or(100.0);
    if eps <= 0.0 {
        args.problem("eps", "must be above 0");
        return;
    }
    let min_samples = args.integer("min_samples").unwrap_or(5);
    if min_samples < 1 {
        args.problem("min_samples", "must be at least 1");
        return;
    }
    let column = args
        .string("cluster_col")
        .unwrap_or_else(|| "cluster".into());
    let crs = super::geometry::work_crs(args, scope);
    out.main(
        "cluster_dbscan",
        params([
            ("eps", json!(eps)),
            ("unit", json!("crs")),
            ("min_samples", json!(min_samples)),
            ("output", json!(column)),
            ("work_crs", crs),
        ]),
    );
}

/// scikit-learn's `HDBSCAN` of the centroids in `crs_meters`: labels in `cluster_col`,
/// probabilities in `probability_col` (none when null).
fn cluster_hdbscan(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let size = args.integer("min_cluster_size").unwrap_or(5);
    if size < 2 {
        args.problem("min_cluster_size", "must be at least 2");
        return;
    }
    let mut native = params([("min_cluster_size", json!(size))]);
    if let Some(samples) = args.integer("min_samples") {
        native.insert("min_samples".into(), json!(samples));
    }
    if args.f64("cluster_selection_epsilon").unwrap_or(0.0) != 0.0 {
        args.problem(
            "cluster_selection_epsilon",
            "a distance below which clusters are not split is not supported yet (0 is)",
        );
    }
    let column = args
        .string("cluster_col")
        .unwrap_or_else(|| "cluster".into());
    native.insert("output".into(), json!(column));
    if !args.is_null("probability_col") {
        let probability = args
            .string("probability_col")
            .unwrap_or_else(|| "cluster_probability".into());
        native.insert("probability".into(), json!(probability));
    }
    native.insert("work_crs".into(), super::geometry::work_crs(args, scope));
    args.note("GISPulse fails when min_samples exceeds the number of points; geomill calls every point noise");
    out.main("cluster_hdbscan", native);
}

/// scikit-learn's `KMeans(k, random_state, n_init="auto")` of the centroids in `crs_meters`:
/// labels in `cluster_col`, distances to the centres in `distance_col` (none when null).
fn cluster_kmeans(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let k = args.integer("k").unwrap_or(5);
    if k < 1 {
        args.problem("k", "must be at least 1");
        return;
    }
    let seed = args.integer("random_state").unwrap_or(42);
    if u32::try_from(seed).is_err() {
        args.problem("random_state", "must be from 0 to 2^32 - 1 (NumPy's seeds)");
        return;
    }
    let column = args
        .string("cluster_col")
        .unwrap_or_else(|| "cluster".into());
    let mut native = params([
        ("k", json!(k)),
        ("method", json!("scikit_learn")),
        ("seed", json!(seed)),
        ("output", json!(column)),
    ]);
    if !args.is_null("distance_col") {
        let distance = args
            .string("distance_col")
            .unwrap_or_else(|| "cluster_dist".into());
        native.insert("distance".into(), json!(distance));
    }
    native.insert("work_crs".into(), super::geometry::work_crs(args, scope));
    args.note("GISPulse fails on a NULL or empty geometry; geomill leaves its cluster NULL");
    out.main("cluster_kmeans", native);
}

/// ST-DBSCAN as GISPulse runs it: scikit-learn's `DBSCAN` over distances in `crs_meters` (`eps_m`
/// default 100) between features whose `time_col` values are at most `eps_time` seconds apart
/// (default 3600); the native time gate gives the same neighbours.
fn cluster_st_dbscan(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let time = args
        .string("time_col")
        .unwrap_or_else(|| "timestamp".into());
    let eps = args.f64("eps_m").unwrap_or(100.0);
    let eps_time = args.f64("eps_time").unwrap_or(3600.0);
    let min_samples = args.integer("min_samples").unwrap_or(5);
    for (key, bad) in [
        ("eps_m", eps <= 0.0),
        ("eps_time", eps_time <= 0.0),
        ("min_samples", min_samples < 1),
    ] {
        if bad {
            args.problem(key, "must be above 0");
            return;
        }
    }
    let column = args
        .string("cluster_col")
        .unwrap_or_else(|| "cluster".into());
    let crs = super::geometry::work_crs(args, scope);
    args.note("a numeric time column (GISPulse reads numbers as nanoseconds) is refused: give timestamps, dates or ISO 8601 text");
    out.main(
        "cluster_st_dbscan",
        params([
            ("time_field", json!(time)),
            ("eps", json!(eps)),
            ("unit", json!("crs")),
            ("eps_time", json!(eps_time)),
            ("min_samples", json!(min_samples)),
            ("output", json!(column)),
            ("work_crs", crs),
        ]),
    );
}

/// DBSCAN over network distances as GISPulse runs it: each layer in `crs_meters` when it is in
/// longitude/latitude (the lines by a side step), the native network rule (ends at 6
/// decimals, the last edge between two nodes) and labels are GISPulse's.
fn cluster_network_dbscan(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let eps = args.f64("eps_m").unwrap_or(100.0);
    let min_samples = args.integer("min_samples").unwrap_or(5);
    if eps <= 0.0 || min_samples < 1 {
        let key = if eps <= 0.0 { "eps_m" } else { "min_samples" };
        args.problem(key, "must be above 0");
        return;
    }
    let Some(lines) = super::reference_layer(args, scope, out, false) else {
        return;
    };
    let crs = match args.string("crs_meters") {
        Some(crs) => crs.replacen("epsg:", "EPSG:", 1),
        None if scope.form == super::super::document::Form::RulesV1 => "EPSG:3857".into(),
        None => {
            args.problem("crs_meters", "give it: GISPulse v2 chooses it from the data (UTM or Lambert-93 on lon/lat), which is not translated");
            return;
        }
    };
    let lines = out.side(
        "reproject",
        params([("to", json!(crs)), ("only_lon_lat", json!(true))]),
        &lines,
    );
    let mut native = params([
        ("ref_layer", json!(lines)),
        ("eps", json!(eps)),
        ("unit", json!("crs")),
        ("min_samples", json!(min_samples)),
        (
            "output",
            json!(
                args.string("cluster_col")
                    .unwrap_or_else(|| "cluster".into())
            ),
        ),
        ("work_crs", json!(format!("angular:{crs}"))),
    ]);
    if let Some(weight) = args.string("weight_col") {
        native.insert("weight_field".into(), json!(weight));
    }
    args.note("a feature equally near two network nodes sits on the lower-numbered one here, where GISPulse's spatial index decides");
    out.main("cluster_network_dbscan", native);
}
