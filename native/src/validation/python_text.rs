//! Values printed as Python prints them: `repr` of floats (shortest round trip, `1e+20`,
//! `3.0`), of texts (quoted, escaped) and of JSON values as Python reads them (`True`,
//! `None`, lists).

use serde_json::Value;

/// Python's `repr` (and `str`) of a float.
pub(super) fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let scientific = format!("{v:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        let text = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{whole}.{fraction}")
        };
        format!("{sign}{text}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        format!(
            "{sign}{mantissa}e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        )
    }
}

/// Python's `repr` of a text: single quotes unless the text holds a single quote and no
/// double one; backslashes, the quote and control characters escaped.
pub(super) fn text_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A JSON value as Python's `repr` prints what `json.loads` makes of it.
pub(super) fn json_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (_, Some(u)) => u.to_string(),
            _ => float_repr(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => text_repr(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(json_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", text_repr(k), json_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python 3's `repr` of each value.
    #[test]
    fn floats_print_as_python_prints_them() {
        for (v, text) in [
            (3.0, "3.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456.5, "123456.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (1.2345e100, "1.2345e+100"),
        ] {
            assert_eq!(float_repr(v), text, "{v:?}");
        }
    }

    #[test]
    fn texts_and_json_print_as_python_prints_them() {
        assert_eq!(text_repr("abc"), "'abc'");
        assert_eq!(text_repr("it's"), "\"it's\"");
        assert_eq!(text_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(text_repr("tab\there\\"), "'tab\\there\\\\'");
        let list: Value = serde_json::from_str(r#"["a", 1, 2.0, true, null]"#).unwrap();
        assert_eq!(json_repr(&list), "['a', 1, 2.0, True, None]");
    }
}
