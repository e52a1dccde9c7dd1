//! `add_field`: add a field holding a constant value.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};
use crate::sql::quote::json_literal;

/// Add the field `name` of type `type` to every feature, set to `value` (default NULL). Fails
/// if the field exists (use `calculate` to replace a field).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddField {
    /// Name of the new field.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Type of the new field.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Initial value (a string, number, boolean or null).
    #[serde(default)]
    pub value: Value,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for AddField {
    const NAME: &'static str = "add_field";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.field_type == FieldType::Geometry || self.name == GEOM {
            return Err(vec![Problem::new(
                ctx.at("name"),
                "geometry fields cannot be added",
            )]);
        }
        if ctx.input.is_some_and(|s| s.has(&self.name)) {
            return Err(vec![Problem::new(
                ctx.at("name"),
                format!("field {} already exists", self.name),
            )]);
        }
        let literal =
            json_literal(&self.value).map_err(|m| vec![Problem::new(ctx.at("value"), m)])?;
        let expr =
            crate::expr::SqlExpr::parse(&format!("CAST({literal} AS {})", self.field_type.sql()))
                .map_err(|m| vec![Problem::new(ctx.at("value"), m)])?;
        Ok(vec![Operator::Map(MapOp {
            set: vec![(self.name.clone(), ValueExpr::Sql(expr), self.field_type)],
            ..MapOp::default()
        })])
    }
}
