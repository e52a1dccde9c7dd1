//! `top_n`: keep the `n` features with the largest (or smallest) value of a field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, SortKey};

/// Keep the `n` features with the largest values of the field `by` (the smallest with
/// `descending: false`), sorted in that order. Fewer features in the input: all are kept. Ties
/// at the cut are broken arbitrarily, so which of equal features is kept may vary between
/// engines.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TopN {
    /// How many features to keep.
    #[schemars(range(min = 1))]
    pub n: u64,
    /// The field to rank by.
    #[schemars(length(min = 1))]
    pub by: String,
    /// Keep the largest values (default true); false keeps the smallest.
    #[serde(default = "default_descending")]
    pub descending: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_descending() -> bool {
    true
}

impl CapabilityParams for TopN {
    const NAME: &'static str = "top_n";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.n == 0 {
            return Err(vec![Problem::new(ctx.at("n"), "must be at least 1")]);
        }
        require_columns(ctx.input, std::slice::from_ref(&self.by), ctx.at("by"))?;
        Ok(vec![Operator::Sort {
            keys: vec![SortKey {
                column: self.by.clone(),
                descending: self.descending,
            }],
            limit: Some(self.n),
        }])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Column, FieldType, Schema};

    #[test]
    fn sorts_then_limits() {
        let params: TopN = serde_json::from_value(json!({"n": 5, "by": "pop_est"})).unwrap();
        let ctx = LowerContext {
            step_id: "t",
            path: "p",
            input: None,
            others: &[],
            rasters: None,
        };
        assert_eq!(
            params.lower(&ctx).unwrap(),
            [Operator::Sort {
                keys: vec![SortKey {
                    column: "pop_est".into(),
                    descending: true
                }],
                limit: Some(5),
            }]
        );
    }

    #[test]
    fn checks_n_and_field() {
        let schema = Schema {
            columns: vec![Column {
                name: "pop_est".into(),
                ty: FieldType::Integer,
            }],
            crs: None,
        };
        let ctx = LowerContext {
            step_id: "t",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        let zero: TopN = serde_json::from_value(json!({"n": 0, "by": "pop_est"})).unwrap();
        assert_eq!(zero.lower(&ctx).unwrap_err()[0].path, "p.n");
        let unknown: TopN =
            serde_json::from_value(json!({"n": 3, "by": "pop", "descending": false})).unwrap();
        assert_eq!(unknown.lower(&ctx).unwrap_err()[0].path, "p.by");
    }
}
