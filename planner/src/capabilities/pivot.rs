//! `pivot`: turn rows into columns, one per value of a field (listed, or found in the data).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::checks::require_columns;
use super::lookup_table::key_literal;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, PivotFunc, PivotGeometry, PivotOp, ReshapeOp};
use crate::schema::GEOM;
use crate::sql::quote::json_literal;

/// Turn rows into columns: one output row per distinct combination of the `index` fields, and
/// one column per value listed in `column_values`, holding `aggregate` (default `sum`) of the
/// `values` field over that group's rows whose `columns` field has that value, e.g.
/// `{"index": ["continent"], "columns": "income", "values": "pop_est", "column_values":
/// ["high", "low"]}` gives the columns `continent`, `high`, `low`; rows with other values are
/// left out of every column. Without `column_values`, every non-NULL value found in the data
/// becomes a column, in sorted order (at most 1,000), as pandas' `pivot_table` does: the step
/// then runs on the native backend whatever the engine (SQL fixes a query's columns before
/// reading the data), groups with a NULL index field are left out and sorted, a group none of
/// whose cells has a value is left out, and a later step cannot name the new columns when the
/// run is planned. A group without a row of a value gets NULL there (0 for `count` over listed
/// values), or `fill_value`. `aggregate` is `count`, `sum`, `avg`/`mean`, `min`, `max`, and,
/// for columns found in the data, `first`, `last` (in the layer's order) and `median`; NULL
/// values are left out. A column is named after its value (a number or boolean as written,
/// e.g. `2020`, `true`), after `prefix` when given. The other fields are dropped. Each output
/// row keeps one geometry of its group, the same on every engine: with `geometry: hash` (the
/// default) the one whose WKB has the lowest MD5 hash (NULL geometries last), with `first` the
/// group's first row's in the layer's order; not a union (use `dissolve` for that).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Pivot {
    /// Fields whose distinct combinations become the output rows.
    #[schemars(length(min = 1))]
    pub index: Vec<String>,
    /// The field whose values become columns.
    #[schemars(length(min = 1))]
    pub columns: String,
    /// The field aggregated into the new columns.
    #[schemars(length(min = 1))]
    pub values: String,
    /// The values of `columns` that become columns (strings, numbers or booleans; default:
    /// every value found in the data).
    #[serde(default)]
    #[schemars(length(min = 1))]
    #[schemars(extend("items" = {"type": ["string", "number", "boolean"]}))]
    pub column_values: Option<Vec<Value>>,
    /// How each cell aggregates its rows' `values` (default `sum`).
    #[serde(default = "default_aggregate")]
    pub aggregate: PivotFunc,
    /// Put before every new column's name (default none).
    #[serde(default)]
    pub prefix: String,
    /// The value of a cell without one (default NULL).
    #[serde(default)]
    #[schemars(extend("type" = ["string", "number", "boolean", "null"]))]
    pub fill_value: Option<Value>,
    /// `hash` (default): the group's geometry whose WKB hashes lowest; `first`: its first row's.
    #[serde(default)]
    pub geometry: PivotGeometry,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_aggregate() -> PivotFunc {
    PivotFunc::Sum
}

/// A JSON scalar as the text a column is named after.
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

impl CapabilityParams for Pivot {
    const NAME: &'static str = "pivot";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        for (param, names) in [
            ("index", self.index.clone()),
            ("columns", vec![self.columns.clone()]),
            ("values", vec![self.values.clone()]),
        ] {
            if names.iter().any(|n| n == GEOM) {
                problems.push(Problem::new(ctx.at(param), "cannot be the geometry"));
            } else if let Err(found) = require_columns(ctx.input, &names, ctx.at(param)) {
                problems.extend(found);
            }
        }
        if self.index.is_empty() {
            problems.push(Problem::new(ctx.at("index"), "needs at least one field"));
        }
        if self.column_values.as_ref().is_some_and(Vec::is_empty) {
            problems.push(Problem::new(ctx.at("column_values"), "needs at least one value"));
        }
        if let Some(fill) = &self.fill_value
            && !matches!(fill, Value::String(_) | Value::Number(_) | Value::Bool(_))
        {
            problems.push(Problem::new(
                ctx.at("fill_value"),
                format!("must be a string, number or boolean, got {fill}"),
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let Some(column_values) = &self.column_values else {
            return Ok(vec![self.operator(None)]);
        };
        let ty = ctx
            .input
            .and_then(|s| s.columns.iter().find(|c| c.name == self.columns))
            .map(|c| c.ty)
            .filter(|t| *t != crate::schema::FieldType::Unknown);
        if self.aggregate.sql().is_none() {
            problems.push(Problem::new(
                ctx.at("aggregate"),
                format!(
                    "{} takes the columns from the data (no column_values); with column_values: count, sum, avg, mean, min, max",
                    self.aggregate.as_str()
                ),
            ));
        }
        let mut outputs: Vec<(String, String)> = Vec::new();
        for (i, value) in column_values.iter().enumerate() {
            let path = ctx.at(&format!("column_values[{i}]"));
            let Some(text) = value_text(value) else {
                problems.push(Problem::new(path, "must be a string, number or boolean"));
                continue;
            };
            let literal = match ty {
                Some(_) => key_literal(&text, ty),
                None => json_literal(value),
            };
            let output = format!("{}{text}", self.prefix);
            if output == GEOM || self.index.contains(&output) || outputs.iter().any(|(_, o)| *o == output) {
                problems.push(Problem::new(
                    path,
                    format!("column {output} would appear twice: give a prefix or remove the value"),
                ));
                continue;
            }
            match literal {
                Ok(literal) => outputs.push((literal, output)),
                Err(message) => problems.push(Problem::new(path, message)),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![self.operator(Some(outputs))])
    }
}

impl Pivot {
    fn operator(&self, outputs: Option<Vec<(String, String)>>) -> Operator {
        Operator::Reshape(ReshapeOp::Pivot(PivotOp {
            index: self.index.clone(),
            columns: self.columns.clone(),
            values: self.values.clone(),
            func: self.aggregate,
            outputs,
            prefix: self.prefix.clone(),
            fill: self.fill_value.clone(),
            geometry: self.geometry,
        }))
    }
}
