//! GISPulse's `completeness_check` onto the native per-field summary (`describe`): one row per
//! column with its total, NULL count and ratio, and whether the ratio is within
//! `null_threshold`.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};
use crate::gispulse::pandas::half_to_even;
use crate::sql::quote::number;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "completeness_check" => completeness_check,
        _ => return None,
    })
}

/// The columns of GISPulse's report, in its order.
const REPORT: &[&str] = &[
    "column",
    "total",
    "null_count",
    "null_ratio",
    "is_complete",
    "coverage_ratio",
];

fn completeness_check(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let columns = args.names("columns").filter(|names| !names.is_empty());
    let threshold = args.f64("null_threshold").unwrap_or(0.0);
    if !(0.0..=1.0).contains(&threshold) {
        args.problem("null_threshold", "must be from 0 to 1");
        return;
    }
    if args.has("reference_gdf") {
        args.problem(
            "reference_gdf",
            "the spatial coverage row is not supported yet",
        );
        return;
    }
    let Ok(threshold) = number(threshold) else {
        args.problem("null_threshold", "must be a finite number");
        return;
    };
    args.note("completeness_check: a column the layer lacks fails the step (GISPulse reports it 100 % NULL); the report has no geometry column (GISPulse's is NULL)");
    let mut describe = params([]);
    if let Some(columns) = columns {
        describe.insert("fields".into(), json!(columns));
    }
    out.main("describe", describe);
    let ratio = "CAST(\"nulls\" AS FLOAT8) / NULLIF(\"count\" + \"nulls\", 0)";
    out.columns_as(
        json!({
            "column": "\"field\"",
            "total": "\"count\" + \"nulls\"",
            "null_count": "\"nulls\"",
            "null_ratio": format!("coalesce({}, 0.0)", half_to_even(ratio, 6)),
            "is_complete": format!("coalesce({ratio}, 0.0) <= {threshold}"),
            "coverage_ratio": "CAST(NULL AS FLOAT8)",
        }),
        REPORT,
    );
}
