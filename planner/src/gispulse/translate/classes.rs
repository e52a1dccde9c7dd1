//! GISPulse's classification (`classify`, `head_tail_breaks`) onto the native one: classes
//! numbered from 1, a colour per class from a palette list.

use serde_json::{Value, json};

use super::{Args, Emitted, Scope, Translator, class_colors, palette_list, params};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "classify" => classify,
        "choropleth" => choropleth,
        "graduated_size" => graduated_size,
        "classify_categorical" => classify_categorical,
        "head_tail_breaks" => head_tail_breaks,
        _ => return None,
    })
}

/// A native column the translation uses for a moment.
const SCRATCH: &str = "__geomill_gispulse_class";

/// The suffixes of native classify's bound fields.
const BOUNDS: &[&str] = &["_lower", "_upper"];

/// `bins` classes of `field` by `method` (pandas' `qcut` for quantiles, `cut` over equal
/// widths: the breaks mapclassify computes, upper bounds included), numbered from 1 in
/// `class_col`; with a `palette` list, its colours in `color_col`.
fn classify(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field") else {
        args.problem("field", "is required");
        return;
    };
    let Some(native_method) = native_method(args, "method") else {
        args.value("breaks");
        args.value("std_multiplier");
        return;
    };
    let bins = args.integer("bins").unwrap_or(5);
    if !(2..=100).contains(&bins) {
        args.problem("bins", "must be from 2 to 100");
        return;
    }
    let class = args.string("class_col").unwrap_or_else(|| "class".into());
    let color = args.value("color_col").cloned();
    let palette = palette_list(args, "a named palette is not");
    if palette
        .as_ref()
        .is_some_and(|colors| colors.len() as i64 != bins)
    {
        args.problem("palette", format!("needs {bins} colours, one per class"));
        return;
    }
    out.main(
        "classify",
        params([
            ("field", json!(field)),
            ("method", json!(native_method)),
            ("classes", json!(bins)),
            ("output", json!(SCRATCH)),
        ]),
    );
    numbered_from_one(out, (&class, BOUNDS), color, palette);
}

/// GISPulse's `choropleth`: `classify` with a palette required (GISPulse's default is the
/// named `YlOrRd`); its style and legend are dataframe metadata, not columns, so nothing of them
/// reaches a file.
fn choropleth(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    if !args.has("palette") {
        args.problem(
            "palette",
            "GISPulse's default, the named palette YlOrRd, is not supported yet: give a list of colours",
        );
        return;
    }
    args.value("geom_type");
    args.value("label_fmt");
    args.note(
        "GISPulse's style and legend (gispulse_style, gispulse_legend) are metadata of its \
         dataframe, not columns: no file keeps them, and geomill does not make them",
    );
    classify(args, scope, out);
}

/// The most classes native `classify_categorical` makes.
const MAX_CATEGORIES: i64 = 256;

/// GISPulse's `classify_categorical`: a class per value from 1, the most frequent first and
/// equal counts as first seen (native `ties: first_seen`); past `max_categories` values the
/// rest share one more class; a colour per class from a palette list (the class after the
/// named ones takes the next colour).
fn classify_categorical(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field") else {
        args.problem("field", "is required");
        return;
    };
    let max_classes = match args.value("max_categories") {
        None | Some(Value::Null) => {
            args.note(format!(
                "values past the {} most frequent share one class here; GISPulse names every value",
                MAX_CATEGORIES - 1
            ));
            MAX_CATEGORIES
        }
        Some(value) => match value.as_i64() {
            Some(m) if (1..MAX_CATEGORIES).contains(&m) => m + 1,
            _ => {
                args.problem(
                    "max_categories",
                    format!("must be a whole number from 1 to {}", MAX_CATEGORIES - 1),
                );
                return;
            }
        },
    };
    if !args.has("palette") {
        args.problem(
            "palette",
            "GISPulse's default, the named palette Set2, is not supported yet: give a list of colours",
        );
        return;
    }
    let palette = palette_list(args, "a named palette or a value-to-colour map is not");
    let Some(palette) = palette else {
        return;
    };
    args.value("other_label");
    args.note("GISPulse fails when the colour list's length is not the class count; geomill colours the classes it has colours for");
    let class = args.string("class_col").unwrap_or_else(|| "class".into());
    let color = args.value("color_col").cloned();
    out.main(
        "classify_categorical",
        params([
            ("field", json!(field)),
            ("max_classes", json!(max_classes)),
            ("ties", json!("first_seen")),
            ("output", json!(SCRATCH)),
        ]),
    );
    numbered_from_one(out, (&class, &["_label"]), color, Some(palette));
}

/// A native column the translation counts classes into for a moment.
const COUNT: &str = "__geomill_gispulse_class_count";

/// GISPulse's `graduated_size`: the classes of `classify` (no colour), and a marker size per
/// class, from `size_range[0]` for the lowest to `size_range[1]` for the highest, spaced
/// evenly (`linear`) or by the square root (`sqrt`) of the class's place; the middle size
/// when there is one class. Native `graduated_size` sizes by the value itself, another rule.
fn graduated_size(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field") else {
        args.problem("field", "is required");
        return;
    };
    let Some(method) = native_method(args, "method") else {
        args.value("breaks");
        args.value("std_multiplier");
        return;
    };
    let bins = args.integer("bins").unwrap_or(5);
    if !(2..=32).contains(&bins) {
        args.problem("bins", "must be from 2 to 32 (native classify's range)");
        return;
    }
    let range = match args.value("size_range") {
        None => Some((4.0, 20.0)),
        Some(Value::Array(pair)) if pair.len() == 2 => pair[0].as_f64().zip(pair[1].as_f64()),
        Some(_) => None,
    };
    let Some((small, large)) = range.filter(|(a, b)| *a > 0.0 && a < b && b.is_finite()) else {
        args.problem(
            "size_range",
            "must be [smallest, largest]: two positive sizes, the first below the second",
        );
        return;
    };
    let scaling = args.string("scaling").unwrap_or_else(|| "linear".into());
    let root = match scaling.as_str() {
        "linear" => false,
        "sqrt" => true,
        _ => {
            args.problem(
                "scaling",
                format!("{scaling:?} is not supported yet (linear and sqrt are; log needs Python's log1p)"),
            );
            return;
        }
    };
    let class = args.string("class_col").unwrap_or_else(|| "class".into());
    let size = args
        .string("size_col")
        .unwrap_or_else(|| "marker_size".into());
    let (Ok(small_sql), Ok(large_sql)) = (
        crate::sql::quote::number(small),
        crate::sql::quote::number(large),
    ) else {
        return;
    };
    let middle = crate::sql::quote::number((small + large) / 2.0).unwrap_or_default();
    let (scratch, count) = (ident(SCRATCH), ident(COUNT));
    // Python's arithmetic: t = (class - 1) / (n - 1), then s_min + t * (s_max - s_min).
    let t = format!("CAST({scratch} AS DOUBLE PRECISION) / ({count} - 1)");
    let place = if root { format!("sqrt({t})") } else { t };
    let sized = format!(
        "CASE WHEN {scratch} IS NULL THEN NULL WHEN {count} <= 1 THEN {middle} \
         ELSE {small_sql} + {place} * ({large_sql} - {small_sql}) END"
    );
    out.main(
        "classify",
        params([
            ("field", json!(field)),
            ("method", json!(method)),
            ("classes", json!(bins)),
            ("output", json!(SCRATCH)),
            ("count_field", json!(COUNT)),
        ]),
    );
    out.main(
        "calculate",
        params([("expressions", json!({size.clone(): sized}))]),
    );
    numbered_from_one(out, (&class, BOUNDS), Some(Value::Null), None);
    out.main("drop_field", params([("fields", json!([COUNT]))]));
}

/// GISPulse's classification method in `key` (quantile by default) as the native method
/// giving its classes: pandas' `qcut` for quantiles (the minimum is an edge, not a class of its
/// own), `equal_interval` as is; the others are a problem.
pub(super) fn native_method(args: &mut Args<'_>, key: &str) -> Option<&'static str> {
    let method = args.string(key).unwrap_or_else(|| "quantile".into());
    match method.as_str() {
        "quantile" => Some("qcut"),
        "equal_interval" => Some("equal_interval"),
        _ => {
            args.problem(
                key,
                format!("{method:?} is not supported yet (quantile and equal_interval are)"),
            );
            None
        }
    }
}

/// GISPulse's head/tail breaks (Jiang 2013, stopped once the head above a mean holds more than
/// `head_ratio_cutoff` of the values, at most `max_depth` means, the maximum closing the last
/// class: native `method: head_tail_ratio`), classes from 1, a palette list's colours.
fn head_tail_breaks(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(field) = args.string("field") else {
        args.problem("field", "is required");
        return;
    };
    let depth = args.integer("max_depth").unwrap_or(12);
    if !(2..=32).contains(&depth) {
        args.problem("max_depth", "must be from 2 to 32");
        return;
    }
    if args.f64("head_ratio_cutoff").is_some_and(|c| c != 0.4) {
        args.problem(
            "head_ratio_cutoff",
            "only 0.4 (the default) is supported yet",
        );
        return;
    }
    let class = args.string("class_col").unwrap_or_else(|| "class".into());
    let color = args.value("color_col").cloned();
    let palette = palette_list(args, "a named palette is not");
    out.main(
        "classify",
        params([
            ("field", json!(field)),
            ("method", json!("head_tail_ratio")),
            ("classes", json!(depth)),
            ("output", json!(SCRATCH)),
        ]),
    );
    numbered_from_one(out, (&class, BOUNDS), color, palette);
}

/// The native class (from 0, in [`SCRATCH`]) as GISPulse numbers it, from 1 in `class`, and
/// with a palette list its colour in `color` (GISPulse's `color_col`: default `color`, none
/// when null); the native class field and its companions (`suffixes`) dropped.
fn numbered_from_one(
    out: &mut Emitted,
    (class, suffixes): (&str, &[&str]),
    color: Option<Value>,
    palette: Option<Vec<String>>,
) {
    let scratch = ident(SCRATCH);
    let mut expressions = serde_json::Map::new();
    expressions.insert(class.to_owned(), json!(format!("{scratch} + 1")));
    let color = match color {
        None => Some("color".to_owned()),
        Some(Value::String(name)) => Some(name),
        Some(_) => None,
    };
    if let (Some(colors), Some(color)) = (palette, color) {
        let case = class_colors(&scratch, 0, &colors);
        expressions.insert(color, json!(case));
    }
    out.main(
        "calculate",
        params([("expressions", Value::Object(expressions))]),
    );
    out.main(
        "drop_field",
        params([(
            "fields",
            json!(
                std::iter::once(SCRATCH.to_owned())
                    .chain(suffixes.iter().map(|suffix| format!("{SCRATCH}{suffix}")))
                    .collect::<Vec<_>>()
            ),
        )]),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn translated(given: Value) -> (Vec<String>, Emitted) {
        super::super::translated_by(classify, given)
    }

    #[test]
    fn classes_count_from_one_with_a_colour_each() {
        let (problems, out) =
            translated(json!({"field": "pop", "bins": 2, "palette": ["#000", "#fff"]}));
        assert!(problems.is_empty(), "{problems:?}");
        let steps: Vec<&str> = out.steps.iter().map(|(c, _, _)| c.as_str()).collect();
        assert_eq!(steps, ["classify", "calculate", "drop_field"]);
        assert_eq!(out.steps[0].1["method"], "qcut");
        let expressions = &out.steps[1].1["expressions"];
        assert_eq!(expressions["class"], "\"__geomill_gispulse_class\" + 1");
        assert!(
            expressions["color"]
                .as_str()
                .unwrap()
                .contains("THEN '#fff'")
        );
    }

    #[test]
    fn what_is_not_translated_is_named() {
        let (problems, _) = translated(json!({"field": "pop", "method": "jenks"}));
        assert!(problems[0].contains("jenks"), "{problems:?}");
        let (problems, _) = translated(json!({"field": "pop", "bins": 3, "palette": ["#000"]}));
        assert!(problems[0].contains("needs 3 colours"), "{problems:?}");
    }

    #[test]
    fn a_choropleth_is_a_classification_with_a_palette() {
        let given =
            json!({"field": "pop", "bins": 2, "palette": ["#000", "#fff"], "label_fmt": "{lo}"});
        let (problems, out) = super::super::translated_by(choropleth, given);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(out.steps[0].1["method"], "qcut");
        let (problems, _) = super::super::translated_by(choropleth, json!({"field": "pop"}));
        assert!(problems[0].contains("YlOrRd"), "{problems:?}");
    }
}
