//! `sort`: order the features by field values.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, SortKey};

/// Order the features by the fields in `by`: by the first, ties broken by the second, and so
/// on, each ascending unless `descending: true`, e.g.
/// `[{"field": "continent"}, {"field": "pop_est", "descending": true}]`. Features equal on every
/// field come in no guaranteed order; where NULLs go, and how text is collated, may differ
/// between engines.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Sort {
    /// Sort keys, most significant first.
    #[schemars(length(min = 1))]
    pub by: Vec<SortField>,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// One sort key.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SortField {
    /// The field to sort by.
    #[schemars(length(min = 1))]
    pub field: String,
    /// Largest first (default false: smallest first).
    #[serde(default)]
    pub descending: bool,
}

impl CapabilityParams for Sort {
    const NAME: &'static str = "sort";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.by.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("by"),
                "needs at least one field to sort by",
            )]);
        }
        let names: Vec<String> = self.by.iter().map(|key| key.field.clone()).collect();
        require_columns(ctx.input, &names, ctx.at("by"))?;
        let keys = self
            .by
            .iter()
            .map(|key| SortKey {
                column: key.field.clone(),
                descending: key.descending,
            })
            .collect();
        Ok(vec![Operator::Sort { keys, limit: None }])
    }
}
