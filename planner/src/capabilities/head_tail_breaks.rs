//! `head_tail_breaks`: classes for heavy-tailed data (the mean, then the mean of the head...).

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::{classify_op, default_output};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{ClassMethod, Operator};

/// Classify the numeric field `field` by head/tail breaks (Jiang 2013), as
/// `mapclassify.HeadTailBreaks` does: the first break is the mean of every value, the next the
/// mean of the values above it (the head), and so on while the head holds more than one
/// distinct value. Suited to heavy-tailed data (city sizes, incomes): each class is the tail of
/// the head above it. Adds `<output>` (the class, 0 for the lowest) and `<output>_lower`,
/// `<output>_upper` (its bounds); NULL values stay unclassified. The same as `classify` with
/// `method: head_tail_breaks`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct HeadTailBreaks {
    /// The numeric field to classify.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The name of the class field (default `class`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for HeadTailBreaks {
    const NAME: &'static str = "head_tail_breaks";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::owned(classify_op(
            ctx,
            &self.field,
            ClassMethod::HeadTailBreaks,
            super::classify::default_classes(),
            &self.output,
            None,
        )?)])
    }
}
