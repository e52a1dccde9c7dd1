//! GISPulse's `normalize` onto the native one: its six methods, a ratio to `denom_field`
//! first, `minmax` over equal values 0.5.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "normalize" => normalize,
        _ => return None,
    })
}

const METHODS: &[&str] = &["log", "log1p", "minmax", "percent", "rank", "zscore"];

/// The ratio to `denom_field`, named here for a moment.
const RATIO: &str = "__gispulse_ratio";

fn normalize(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field").filter(|f| !f.is_empty()) else {
        args.problem("field", "is required");
        return;
    };
    let method = args.string("method").unwrap_or_else(|| "minmax".into());
    if !METHODS.contains(&method.as_str()) {
        args.problem(
            "method",
            format!("{method:?}: expected one of {}", METHODS.join(", ")),
        );
        return;
    }
    let output = args
        .string("out_field")
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| format!("{field}_{method}"));
    let source = match args.string("denom_field") {
        Some(denominator) => {
            // pandas: the ratio, NaN where the denominator is 0.
            let ratio = format!(
                "CAST({} AS FLOAT8) / NULLIF({}, 0)",
                ident(&field),
                ident(&denominator)
            );
            out.main(
                "calculate",
                params([("expressions", json!({RATIO: ratio}))]),
            );
            RATIO.to_owned()
        }
        None => field,
    };
    if matches!(method.as_str(), "log" | "log1p") {
        args.note("normalize log/log1p: GISPulse fails the step on a value below its domain; geomill gives that row NULL");
    }
    let mut native = params([
        ("field", json!(source)),
        ("method", json!(method)),
        ("output", json!(output)),
    ]);
    if method == "minmax" {
        native.insert("equal_value".into(), json!(0.5));
    }
    out.main("normalize", native);
    if source == RATIO {
        out.main("drop_field", params([("fields", json!([RATIO]))]));
    }
}
