//! Quoting helpers: the only way names and values enter generated SQL.

use serde_json::Value;

use crate::expr::SqlExpr;

/// A double-quoted identifier (`a"b` → `"a""b"`), valid in DuckDB and PostgreSQL.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A single-quoted string literal (`it's` → `'it''s'`).
pub fn string(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// A finite number as SQL (`NaN` and infinities are refused).
pub fn number(value: f64) -> Result<String, String> {
    if value.is_finite() {
        Ok(format!("{value:?}").trim_end_matches(".0").to_owned())
    } else {
        Err(format!("{value} is not a finite number"))
    }
}

/// A JSON scalar as an SQL literal.
pub fn json_literal(value: &Value) -> Result<String, String> {
    match value {
        Value::Null => Ok("NULL".into()),
        Value::Bool(b) => Ok(if *b { "TRUE" } else { "FALSE" }.into()),
        Value::Number(n) => n
            .as_i64()
            .map(|i| i.to_string())
            .or_else(|| n.as_u64().map(|u| u.to_string()))
            .map_or_else(|| number(n.as_f64().unwrap_or(f64::NAN)), Ok),
        Value::String(s) => Ok(string(s)),
        Value::Array(_) | Value::Object(_) => Err(format!("expected a scalar value, got {value}")),
    }
}

/// A JSON scalar as a checked expression.
pub fn literal_expr(value: &Value) -> Result<SqlExpr, String> {
    SqlExpr::parse(&json_literal(value)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(ident("pop est"), "\"pop est\"");
        assert_eq!(ident("a\"; DROP"), "\"a\"\"; DROP\"");
        assert_eq!(string("it's"), "'it''s'");
        assert_eq!(number(500.0).unwrap(), "500");
        assert_eq!(number(0.25).unwrap(), "0.25");
        assert_eq!(number(1e-9).unwrap(), "1e-9");
        assert!(number(f64::NAN).is_err());
        assert_eq!(json_literal(&json!("O'Hare")).unwrap(), "'O''Hare'");
        assert_eq!(json_literal(&json!(null)).unwrap(), "NULL");
        assert_eq!(json_literal(&json!(-3)).unwrap(), "-3");
        assert!(json_literal(&json!([1])).is_err());
        assert_eq!(
            literal_expr(&json!("x'); DROP TABLE t; --"))
                .unwrap()
                .to_sql(),
            "'x''); DROP TABLE t; --'"
        );
    }
}
