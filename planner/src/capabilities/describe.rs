//! `describe`: a table summarising each field's values.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ReshapeOp};
use crate::schema::GEOM;

/// Summarise the fields `fields` (default: every attribute) as a table without geometry, one
/// row per field in order, with the columns `field` (its name), `type` (`integer`, `double`,
/// `text`, `boolean`, `date`, `timestamp`, or `unknown`), `count` (non-NULL values), `nulls`,
/// `distinct` (distinct non-NULL values), and, for numeric fields only (NULL for others),
/// `min`, `max`, `mean` and `stddev` (the sample standard deviation, NULL with fewer than two
/// values), all as doubles. The geometry cannot be described. `fields` must be given when the
/// input's columns are not known.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Describe {
    /// The fields to summarise (default: every attribute).
    #[serde(default)]
    pub fields: Vec<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Describe {
    const NAME: &'static str = "describe";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.fields.iter().any(|f| f == GEOM) {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "the geometry cannot be described",
            )]);
        }
        require_columns(ctx.input, &self.fields, ctx.at("fields"))?;
        if self.fields.is_empty() && ctx.input.is_some_and(|s| s.attributes().next().is_none()) {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "the input has no attributes to describe",
            )]);
        }
        Ok(vec![Operator::Reshape(ReshapeOp::Describe {
            fields: self.fields.clone(),
        })])
    }
}
