//! GISPulse's time steps: the window of `temporal_filter` onto a native filter (its bounds
//! inclusive or not, the window kept or left out, as pandas compares datetimes), and
//! `temporal_join`'s exact and as-of merges (pandas `merge_asof`) onto native `temporal_join`.

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator, params, reference_layer};
use crate::capabilities::parse_iso_time;
use crate::sql::quote::{ident, string};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "temporal_filter" => temporal_filter,
        "temporal_join" => temporal_join,
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

/// pandas' `merge` on equal times (`exact`) or `merge_asof` (`backward`, the default,
/// `forward`, `nearest`; `by` keys matched, `tolerance` a pandas Timedelta): every input row
/// kept, with its time as a timestamp, the reference's fields (`_ref` on a clash) but its time.
fn temporal_join(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(left) = args.string("left_on").filter(|c| !c.is_empty()) else {
        args.problem("left_on", "is required");
        return;
    };
    let right = args.string("right_on").unwrap_or_else(|| left.clone());
    let strategy = args.string("strategy").unwrap_or_else(|| "backward".into());
    let by = args.names("by").unwrap_or_default();
    let tolerance = match args.string("tolerance") {
        Some(text) => match timedelta_seconds(&text) {
            Ok(seconds) => Some(seconds),
            Err(message) => {
                args.problem("tolerance", message);
                return;
            }
        },
        None => None,
    };
    let columns = args.names("columns").unwrap_or_default();
    let Some(source) = reference_layer(args, scope, out, false) else {
        return;
    };
    let mut native: Map<String, Value> = params([
        ("other", json!(source)),
        ("field", json!(left)),
        ("other_field", json!(right)),
        ("suffix", json!("_ref")),
        ("how", json!("left")),
        ("keep_other_field", json!(false)),
    ]);
    let asof = match strategy.as_str() {
        "exact" => None,
        "backward" | "forward" => Some(strategy.as_str()),
        "nearest" => Some("both"),
        other => {
            args.problem(
                "strategy",
                format!("{other:?}: expected exact, nearest, backward or forward"),
            );
            return;
        }
    };
    let mut brought = Vec::new();
    match asof {
        None => {
            // pandas merges on the time alone: `by` only keeps its fields among `columns`.
            native.insert("match".into(), json!("all"));
            native.insert("tolerance".into(), json!({"amount": 0, "unit": "seconds"}));
            brought.extend(by.iter().cloned());
        }
        Some(direction) => {
            native.insert("match".into(), json!("nearest"));
            native.insert("direction".into(), json!(direction));
            if let Some(seconds) = tolerance {
                native.insert(
                    "tolerance".into(),
                    json!({"amount": seconds, "unit": "seconds"}),
                );
            }
            if !by.is_empty() {
                native.insert("on".into(), json!(by));
            }
        }
    }
    if !columns.is_empty() {
        brought.extend(
            columns
                .iter()
                .filter(|c| !brought.contains(c))
                .cloned()
                .collect::<Vec<_>>(),
        );
        native.insert("columns".into(), json!(brought));
    }
    args.note("temporal_join: equally near reference rows are chosen by the earlier time, then by geometry hash; pandas takes the last (backward) or first (forward) in the layer's order");
    out.main(
        "cast_field",
        params([("field", json!(left)), ("type", json!("timestamp"))]),
    );
    out.main("temporal_join", native);
}

/// A pandas Timedelta string (`"1h"`, `"30s"`, `"2 days"`, `"1h30min"`, `"1 days 02:00:00"`,
/// `"00:30:00"`) in seconds.
pub fn timedelta_seconds(text: &str) -> Result<f64, String> {
    let bad = || {
        format!(
            "{text:?} is not a duration geomill reads (a pandas Timedelta such as \"1h\", \"30s\", \"2 days\", \"1 days 02:00:00\")"
        )
    };
    let mut rest = text.trim();
    let mut total = 0.0;
    let mut any = false;
    while !rest.is_empty() {
        if let Some(clock) = clock_seconds(rest) {
            total += clock;
            any = true;
            break;
        }
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let amount: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = rest[digits..].trim_start();
        let letters = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = match rest[..letters].to_ascii_lowercase().as_str() {
            "w" | "week" | "weeks" => 604_800.0,
            "d" | "day" | "days" => 86_400.0,
            "h" | "hr" | "hour" | "hours" => 3_600.0,
            "m" | "t" | "min" | "minute" | "minutes" => 60.0,
            "s" | "sec" | "second" | "seconds" => 1.0,
            "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1e-3,
            "us" | "micro" | "micros" | "microsecond" | "microseconds" => 1e-6,
            "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => 1e-9,
            _ => return Err(bad()),
        };
        total += amount * unit;
        any = true;
        rest = rest[letters..].trim_start();
    }
    if !any || !total.is_finite() {
        return Err(bad());
    }
    Ok(total)
}

/// `HH:MM:SS` (seconds may have a fraction) in seconds.
fn clock_seconds(text: &str) -> Option<f64> {
    let parts: Vec<&str> = text.split(':').collect();
    let [h, m, s] = parts.as_slice() else {
        return None;
    };
    let whole = |p: &str| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<f64>().ok())
            .flatten()
    };
    let seconds: f64 = s
        .parse()
        .ok()
        .filter(|_| !s.is_empty() && !s.starts_with(['+', '-']))?;
    Some(whole(h)? * 3_600.0 + whole(m)? * 60.0 + seconds)
}

#[cfg(test)]
mod tests {
    use super::timedelta_seconds;

    #[test]
    fn reads_pandas_timedeltas() {
        for (text, seconds) in [
            ("1h", 3_600.0),
            ("30s", 30.0),
            ("2 days", 172_800.0),
            ("1D", 86_400.0),
            ("15min", 900.0),
            ("1h30m", 5_400.0),
            ("1 days 02:00:00", 93_600.0),
            ("00:30:00", 1_800.0),
            ("1W", 604_800.0),
            ("500ms", 0.5),
        ] {
            assert_eq!(timedelta_seconds(text), Ok(seconds), "{text}");
        }
        for text in ["", "h", "1 fortnight", "1:2", "-1h", "1e400h"] {
            assert!(timedelta_seconds(text).is_err(), "{text}");
        }
    }
}
