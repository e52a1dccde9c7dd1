//! `union`: merge every geometry into one feature.

use schemars::JsonSchema;
use serde::Deserialize;

use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{AggFunc, AggItem, AggregateOp, GeometryAgg, Operator};

/// Merge all input features into a single feature whose geometry is the union of every input
/// geometry (overlaps dissolved), with one attribute, `count`, the number of input features.
/// Other attributes are dropped; use `dissolve` to group by fields or aggregate attributes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Union {
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Union {
    const NAME: &'static str = "union";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(self
            .on_invalid
            .before(vec![Operator::Aggregate(AggregateOp {
                group_by: Vec::new(),
                aggregates: vec![AggItem {
                    output: "count".to_owned(),
                    func: AggFunc::Count,
                    column: None,
                }],
                geometry: Some(GeometryAgg::Union),
            })]))
    }
}
