//! GISPulse's `normalize` onto the native one (its six methods, a ratio to `denom_field`
//! first, `minmax` over equal values 0.5) and its `continuous_ramp` (the palette resolved to
//! its stops at plan time, `domain`, `scaling`, equal ends at 0.5).

use serde_json::{Value, json};

use crate::palettes;

use super::{Args, Emitted, Scope, Translator, params};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "normalize" => normalize,
        "continuous_ramp" => continuous_ramp,
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

/// GISPulse's `continuous_ramp`: the palette's `stops` colours (a name resolved as GISPulse
/// resolves it; a list of exactly that many) along the native ramp, equal ends at 0.5.
fn continuous_ramp(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field").filter(|f| !f.is_empty()) else {
        args.problem("field", "is required");
        return;
    };
    let count = usize::try_from(args.integer("stops").unwrap_or(9).clamp(2, 9)).unwrap_or(9);
    let stops: Vec<String> = match args.value("palette") {
        None => resolved(args, "Viridis", count),
        Some(Value::String(name)) => resolved(args, name, count),
        Some(Value::Array(colors)) if colors.iter().all(Value::is_string) => {
            if colors.len() != count {
                args.problem(
                    "palette",
                    format!(
                        "needs {count} colours (GISPulse's stops), got {}",
                        colors.len()
                    ),
                );
            }
            colors
                .iter()
                .filter_map(|c| c.as_str().map(str::to_owned))
                .collect()
        }
        Some(other) => {
            args.problem(
                "palette",
                format!("expected a name or a list of colours, got {other}"),
            );
            return;
        }
    };
    let mut native = params([
        ("field", json!(field)),
        ("stops", json!(stops)),
        ("equal_position", json!(0.5)),
        (
            "output",
            json!(args.string("color_col").unwrap_or_else(|| "color".into())),
        ),
    ]);
    match args.value("domain") {
        None => {}
        Some(Value::String(auto)) if auto == "auto" => {}
        Some(Value::Array(ends)) if ends.len() == 2 && ends.iter().all(Value::is_number) => {
            native.insert("domain".into(), json!(ends));
        }
        Some(other) => args.problem(
            "domain",
            format!("must be \"auto\" or [vmin, vmax], got {other}"),
        ),
    }
    let scaling = args.string("scaling").unwrap_or_else(|| "linear".into());
    if !["linear", "log", "sqrt"].contains(&scaling.as_str()) {
        args.problem(
            "scaling",
            format!("{scaling:?}: expected one of linear, log, sqrt"),
        );
    }
    native.insert("scale".into(), json!(scaling));
    args.note("colours are written as lowercase #rrggbb (GISPulse writes a listed stop as given)");
    out.main("continuous_ramp", native);
}

/// GISPulse's palette `name` at `count` colours as `#rrggbb`, or a problem.
fn resolved(args: &mut Args<'_>, name: &str, count: usize) -> Vec<String> {
    match palettes::gispulse::colors(name, count) {
        Ok(colors) => colors.into_iter().map(palettes::hex).collect(),
        Err(why) => {
            args.problem("palette", why);
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::translated_by;

    #[test]
    fn a_named_palette_becomes_its_stops() {
        let (problems, out) = translated_by(
            super::continuous_ramp,
            json!({"field": "pop", "palette": "YlOrRd", "stops": 3, "scaling": "log", "domain": [1, 100]}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        let (capability, params, _) = &out.steps[0];
        assert_eq!(capability, "continuous_ramp");
        assert_eq!(params["stops"], json!(["#ffeda0", "#feb24c", "#f03b20"]));
        assert_eq!(params["scale"], json!("log"));
        assert_eq!(params["domain"], json!([1, 100]));
        assert_eq!(params["equal_position"], json!(0.5));
    }

    #[test]
    fn gispulse_tables_and_short_lists_are_refused() {
        let (problems, _) = translated_by(super::continuous_ramp, json!({"field": "pop"}));
        assert!(problems[0].contains("own colour table"), "{problems:?}");
        let (problems, _) = translated_by(
            super::continuous_ramp,
            json!({"field": "pop", "palette": ["#000000", "#ffffff"], "stops": 3}),
        );
        assert!(problems[0].contains("needs 3 colours"), "{problems:?}");
    }
}
