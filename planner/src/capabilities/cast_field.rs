//! `cast_field`: convert a field to another type.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Convert the values of the attribute field `field` to `type` (`integer`, `double`, `text`,
/// `boolean`, `date` or `timestamp`), keeping its name. NULLs stay NULL; the step
/// fails when a value cannot be converted (e.g. the text `abc` to `integer`). Converting a
/// `double` to `integer` rounds (it does not truncate). The geometry cannot be cast.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CastField {
    /// The field to convert.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The type to convert it to.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for CastField {
    const NAME: &'static str = "cast_field";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if matches!(self.field_type, FieldType::Geometry | FieldType::Unknown) {
            return Err(vec![Problem::new(
                ctx.at("type"),
                "must be integer, double, text, boolean, date or timestamp",
            )]);
        }
        if self.field == GEOM {
            return Err(vec![Problem::new(
                ctx.at("field"),
                "the geometry cannot be cast",
            )]);
        }
        require_columns(
            ctx.input,
            std::slice::from_ref(&self.field),
            ctx.at("field"),
        )?;
        let value = ValueExpr::Cast {
            column: self.field.clone(),
            to: self.field_type,
        };
        Ok(vec![Operator::Map(MapOp {
            set: vec![(self.field.clone(), value, self.field_type)],
            ..MapOp::default()
        })])
    }
}
