//! `drop_field`: remove attribute fields.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{MapOp, Operator};
use crate::schema::GEOM;

/// Remove the attribute fields `fields` from every feature; the other fields and the geometry
/// are kept. Every field named must exist, and the geometry (`geom`) cannot be dropped.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DropField {
    /// The fields to remove.
    #[schemars(length(min = 1))]
    pub fields: Vec<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for DropField {
    const NAME: &'static str = "drop_field";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.fields.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "needs at least one field",
            )]);
        }
        if self.fields.iter().any(|name| name == GEOM) {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "the geometry cannot be dropped",
            )]);
        }
        require_columns(ctx.input, &self.fields, ctx.at("fields"))?;
        let mut drop: Vec<String> = Vec::new();
        for name in &self.fields {
            if !drop.contains(name) {
                drop.push(name.clone());
            }
        }
        Ok(vec![Operator::Map(MapOp {
            drop,
            ..MapOp::default()
        })])
    }
}
