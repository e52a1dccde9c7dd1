//! Attribute rules checked value by value as a GeoPandas script checks them: each field in
//! the rules' order, each row in input order, the rules `nullable`, `type`, `min`, `max`,
//! `pattern`, `allowed` in turn, values read as pandas reads the field.

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use regex::Regex;
use serde_json::Value;

use super::python_text::{float_repr, json_repr, text_repr};
use super::{Problem, Rows};
use crate::NativeError;
use crate::layer::Layer;
use geomill_planner::plan::validate::PythonRule;

/// A value as Python holds it once pandas has read it.
enum PyValue {
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
}

impl PyValue {
    fn class(&self) -> &'static str {
        match self {
            Self::Int(_) => "int",
            Self::Float(_) => "float",
            Self::Text(_) => "str",
            Self::Bool(_) => "bool",
        }
    }

    /// Python's `str`.
    fn text(&self) -> String {
        match self {
            Self::Int(i) => i.to_string(),
            Self::Float(f) => float_repr(*f),
            Self::Text(t) => t.clone(),
            Self::Bool(b) => if *b { "True" } else { "False" }.into(),
        }
    }

    /// Python's `repr`.
    fn repr(&self) -> String {
        match self {
            Self::Text(t) => text_repr(t),
            other => other.text(),
        }
    }

    /// The value as a number, unless it is a text.
    fn number(&self) -> Option<f64> {
        match self {
            Self::Int(i) => Some(*i as f64),
            Self::Float(f) => Some(*f),
            Self::Bool(b) => Some(f64::from(u8::from(*b))),
            Self::Text(_) => None,
        }
    }

    /// Python's `==` against a JSON value.
    fn equals(&self, item: &Value) -> bool {
        match (self, item) {
            (Self::Text(t), Value::String(s)) => t == s,
            (Self::Text(_), _) | (_, Value::String(_) | Value::Null) => false,
            (value, Value::Bool(b)) => value.number() == Some(f64::from(u8::from(*b))),
            (value, Value::Number(n)) => value.number().is_some() && value.number() == n.as_f64(),
            _ => false,
        }
    }
}

/// A field's values as pandas reads them (`None` for a missing value), and how pandas prints
/// a missing value there.
fn values(
    batch: &RecordBatch,
    index: usize,
    field: &str,
) -> Result<(Vec<Option<PyValue>>, &'static str), NativeError> {
    let column = batch.column(index);
    let cast = |to: &DataType| arrow::compute::cast(column, to).map_err(NativeError::arrow);
    let any_null = column.null_count() > 0;
    let ty = column.data_type();
    let read = match ty {
        t if t.is_integer() && !any_null => {
            let ints = cast(&DataType::Int64)?;
            let ints = ints.as_primitive::<Int64Type>();
            (ints.iter().map(|v| v.map(PyValue::Int)).collect(), "nan")
        }
        t if t.is_integer() || t.is_floating() => {
            let floats = cast(&DataType::Float64)?;
            let floats = floats.as_primitive::<Float64Type>();
            let read = floats
                .iter()
                .map(|v| v.filter(|f| !f.is_nan()).map(PyValue::Float))
                .collect();
            (read, "nan")
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let texts = cast(&DataType::Utf8)?;
            let texts = texts.as_string::<i32>();
            (
                texts
                    .iter()
                    .map(|v| v.map(|t| PyValue::Text(t.to_owned())))
                    .collect(),
                "nan",
            )
        }
        DataType::Boolean => {
            let bools = column.as_boolean();
            (bools.iter().map(|v| v.map(PyValue::Bool)).collect(), "None")
        }
        other => {
            return Err(NativeError::Column {
                column: field.to_owned(),
                problem: format!(
                    "is of type {other}: rules as Python checks them read integer, float, text and boolean fields"
                ),
            });
        }
    };
    Ok(read)
}

/// The violations of `rules` in `layer`'s rows.
pub(super) fn python_rules(
    layer: &Layer,
    rows: &Rows,
    rules: &[PythonRule],
) -> Result<Vec<Problem>, NativeError> {
    let mut problems = Vec::new();
    for rule in rules {
        let col = &rule.field;
        let mut add = |row: usize, problem: &'static str, value: String, reason: String| {
            problems.push(Problem {
                feature: row,
                related: None,
                problem,
                field: Some(col.clone()),
                value: Some(value),
                reason,
                geom: rows.wkb[row].clone(),
            });
        };
        let index = match layer.column_index(col) {
            Ok(index) if !rule.missing => index,
            _ => {
                for row in 0..rows.wkb.len() {
                    add(
                        row,
                        "missing_column",
                        "N/A".into(),
                        format!("Column '{col}' does not exist in the layer."),
                    );
                }
                continue;
            }
        };
        let pattern = rule
            .pattern
            .as_deref()
            .map(|p| {
                Regex::new(&format!(r"\A(?:{p})\z")).map_err(|e| {
                    NativeError::Input(format!("pattern {p:?} of field {col} cannot be read: {e}"))
                })
            })
            .transpose()?;
        let (min, max) = (
            rule.min.as_ref().and_then(serde_json::Number::as_f64),
            rule.max.as_ref().and_then(serde_json::Number::as_f64),
        );
        let bound_text = |n: &Option<serde_json::Number>| {
            n.as_ref()
                .map_or_else(String::new, |n| json_repr(&Value::Number(n.clone())))
        };
        let (min_text, max_text) = (bound_text(&rule.min), bound_text(&rule.max));
        let (read, missing_text) = values(&rows.batch, index, col)?;
        for (row, value) in read.iter().enumerate() {
            let Some(value) = value else {
                if !rule.nullable {
                    add(
                        row,
                        "nullable",
                        missing_text.into(),
                        format!("Column '{col}' does not allow null values."),
                    );
                }
                continue;
            };
            if let Some(class) = rule.class
                && !class.accepts(value.class())
            {
                add(
                    row,
                    "type",
                    value.text(),
                    format!(
                        "Column '{col}': expected {}, got {} (value={}).",
                        class.as_str(),
                        value.class(),
                        value.repr()
                    ),
                );
                continue;
            }
            let length = match value {
                PyValue::Text(t) => Some(t.chars().count()),
                _ => None,
            };
            let measured = length.map_or_else(|| value.number(), |n| Some(n as f64));
            if let (Some(min), Some(v)) = (min, measured)
                && v < min
            {
                let reason = match length {
                    Some(n) => format!("Column '{col}': string length {n} < min {min_text}."),
                    None => format!("Column '{col}': value {} < min {min_text}.", value.text()),
                };
                add(row, "min", value.text(), reason);
            }
            if let (Some(max), Some(v)) = (max, measured)
                && v > max
            {
                let reason = match length {
                    Some(n) => format!("Column '{col}': string length {n} > max {max_text}."),
                    None => format!("Column '{col}': value {} > max {max_text}.", value.text()),
                };
                add(row, "max", value.text(), reason);
            }
            if let (Some(pattern), PyValue::Text(t)) = (&pattern, value)
                && !pattern.is_match(t)
            {
                add(
                    row,
                    "pattern",
                    value.text(),
                    format!(
                        "Column '{col}': value {} does not match pattern {}.",
                        value.repr(),
                        text_repr(rule.pattern.as_deref().unwrap_or_default())
                    ),
                );
            }
            if let Some(allowed) = &rule.allowed
                && !allowed.iter().any(|item| value.equals(item))
            {
                add(
                    row,
                    "allowed",
                    value.text(),
                    format!(
                        "Column '{col}': value {} not in allowed list {}.",
                        value.repr(),
                        json_repr(&Value::Array(allowed.clone()))
                    ),
                );
            }
        }
    }
    Ok(problems)
}
