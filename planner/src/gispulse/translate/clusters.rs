//! GISPulse's clustering onto the native one: DBSCAN over the centroids in `crs_meters`
//! (EPSG:3857 in rules files), `eps` in that CRS's units, the labels in `cluster_col`.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "cluster_dbscan" => cluster_dbscan,
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
