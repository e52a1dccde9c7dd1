//! `filter`: keep the features where an SQL condition holds.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;

/// Keep the features for which the SQL condition `where` is true, e.g.
/// `pop_est > 1000000 AND continent = 'Africa'`. Columns are named bare; scalar functions from a
/// fixed list (arithmetic, text, `ST_Area`, `ST_Intersects`, ...) are allowed, subqueries are not.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Filter {
    /// The SQL condition.
    #[serde(rename = "where")]
    #[schemars(length(min = 1))]
    pub condition: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Filter {
    const NAME: &'static str = "filter";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let predicate = super::checks::parse_expr(&self.condition, ctx, "where")?;
        Ok(vec![Operator::Filter { predicate }])
    }
}
