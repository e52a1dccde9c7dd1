//! `unpivot`: turn columns into rows, one per melted field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ReshapeOp, UnpivotOp};
use crate::schema::GEOM;

/// Turn columns into rows: each feature is repeated once per field of `fields`, with that
/// field's name in `name_field` (default `field`) and its value in `value_field` (default
/// `value`); the melted fields are removed, the other fields and the geometry are repeated on
/// every row, e.g. `{"fields": ["pop_2010", "pop_2020"], "name_field": "year", "value_field":
/// "pop"}`. NULL values give rows too. The value field's type is the fields' common type: a
/// mix of integers and doubles gives doubles, any other mix gives text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Unpivot {
    /// The fields melted into rows.
    #[schemars(length(min = 1))]
    pub fields: Vec<String>,
    /// The new field holding each row's field name (default `field`).
    #[serde(default = "default_name_field")]
    #[schemars(length(min = 1))]
    pub name_field: String,
    /// The new field holding each row's value (default `value`).
    #[serde(default = "default_value_field")]
    #[schemars(length(min = 1))]
    pub value_field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_name_field() -> String {
    "field".to_owned()
}

fn default_value_field() -> String {
    "value".to_owned()
}

impl CapabilityParams for Unpivot {
    const NAME: &'static str = "unpivot";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.fields.is_empty() {
            return Err(vec![Problem::new(ctx.at("fields"), "needs at least one field")]);
        }
        if self.fields.iter().any(|f| f == GEOM) {
            return Err(vec![Problem::new(ctx.at("fields"), "the geometry cannot be melted")]);
        }
        for (i, name) in self.fields.iter().enumerate() {
            if self.fields[..i].contains(name) {
                return Err(vec![Problem::new(
                    ctx.at(&format!("fields[{i}]")),
                    format!("field {name} is named twice"),
                )]);
            }
        }
        require_columns(ctx.input, &self.fields, ctx.at("fields"))?;
        let mut problems = Vec::new();
        for (param, name) in [("name_field", &self.name_field), ("value_field", &self.value_field)] {
            let kept = ctx.input.is_some_and(|s| s.has(name)) && !self.fields.contains(name);
            if name == GEOM || kept {
                problems.push(Problem::new(
                    ctx.at(param),
                    format!("field {name} already exists: name a new field"),
                ));
            }
        }
        if self.name_field == self.value_field {
            problems.push(Problem::new(ctx.at("value_field"), "must differ from name_field"));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Reshape(ReshapeOp::Unpivot(UnpivotOp {
            fields: self.fields.clone(),
            name_field: self.name_field.clone(),
            value_field: self.value_field.clone(),
        }))])
    }
}
