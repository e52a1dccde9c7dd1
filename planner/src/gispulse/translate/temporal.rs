//! GISPulse's time window (`temporal_filter`) onto a native filter: its bounds inclusive or
//! not, the window kept or left out, as pandas compares datetimes.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};
use crate::capabilities::parse_iso_time;
use crate::sql::quote::{ident, string};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "temporal_filter" => temporal_filter,
        _ => return None,
    })
}

/// The rows whose `time_col` lies in the window from `start` to `end` (each bound inclusive
/// unless `include_start`/`include_end` is false; a date is its midnight, as pandas reads it),
/// or with `invert` the rows with a time outside it; rows without a time are never kept.
fn temporal_filter(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(column) = args.string("time_col").filter(|c| !c.is_empty()) else {
        args.problem("time_col", "is required");
        return;
    };
    let time = format!("CAST({} AS TIMESTAMP)", ident(&column));
    let mut bounds = Vec::new();
    for (key, inclusive_key, strict, inclusive) in [
        ("start", "include_start", ">", ">="),
        ("end", "include_end", "<", "<="),
    ] {
        let Some(text) = args.string(key) else {
            args.value(inclusive_key);
            continue;
        };
        let bound = match parse_iso_time(&text) {
            Ok(bound) => bound,
            Err(message) => {
                args.problem(key, message);
                return;
            }
        };
        let operator = if args.bool(inclusive_key).unwrap_or(true) {
            inclusive
        } else {
            strict
        };
        bounds.push(format!(
            "{time} {operator} CAST({} AS TIMESTAMP)",
            string(&bound.text)
        ));
    }
    if bounds.is_empty() {
        args.problem("start", "temporal_filter needs start, end or both");
        return;
    }
    let window = bounds.join(" AND ");
    let condition = if args.bool("invert") == Some(true) {
        format!("{time} IS NOT NULL AND NOT ({window})")
    } else {
        window
    };
    args.note("times are read as ISO timestamps: a text GISPulse reads otherwise (or not at all, leaving the row out) fails the run");
    out.main("filter", params([("where", json!(condition))]));
}
