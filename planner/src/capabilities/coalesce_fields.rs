//! `coalesce_fields`: set a field to the first non-NULL value among several fields.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::{MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};
use crate::sql::quote::ident;

/// Set the field `field` (created, or replaced if it exists) of each feature to the value of the
/// first of `fields`, in the order given, that is not NULL; NULL when all are, e.g.
/// `{"fields": ["name_en", "name_local"], "field": "name"}`. The fields should share a type
/// (the step fails when the engine cannot reconcile them, e.g. text and integer).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CoalesceFields {
    /// The fields to take a value from, in order of preference (at least two).
    #[schemars(length(min = 2))]
    pub fields: Vec<String>,
    /// The field to set.
    #[schemars(length(min = 1))]
    pub field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for CoalesceFields {
    const NAME: &'static str = "coalesce_fields";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if self.fields.len() < 2 {
            problems.push(Problem::new(ctx.at("fields"), "needs at least two fields"));
        }
        if self.fields.iter().any(|name| name == GEOM) {
            problems.push(Problem::new(
                ctx.at("fields"),
                "the geometry cannot be coalesced with attributes",
            ));
        }
        if let Err(found) = require_columns(ctx.input, &self.fields, ctx.at("fields")) {
            problems.extend(found);
        }
        if self.field == GEOM || self.field.trim().is_empty() {
            problems.push(Problem::new(
                ctx.at("field"),
                "cannot be used as a field name",
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let columns: Vec<String> = self.fields.iter().map(|name| ident(name)).collect();
        let expr = SqlExpr::parse(&format!("COALESCE({})", columns.join(", ")))
            .map_err(|m| vec![Problem::new(ctx.at("fields"), m)])?;
        Ok(vec![Operator::Map(MapOp {
            set: vec![(self.field.clone(), ValueExpr::Sql(expr), FieldType::Unknown)],
            ..MapOp::default()
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quotes_every_field() {
        let params: CoalesceFields =
            serde_json::from_value(json!({"fields": ["name en", "a\"b"], "field": "name"}))
                .unwrap();
        let ctx = LowerContext {
            step_id: "c",
            path: "p",
            input: None,
            others: &[],
            rasters: None,
        };
        let ops = params.lower(&ctx).unwrap();
        let [Operator::Map(map)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        let [(_, ValueExpr::Sql(expr), _)] = map.set.as_slice() else {
            panic!("{map:?}")
        };
        assert_eq!(expr.to_sql(), "COALESCE(\"name en\", \"a\"\"b\")");
        assert_eq!(
            expr.columns().into_iter().collect::<Vec<_>>(),
            ["a\"b", "name en"]
        );
    }
}
