//! `calculate`: compute new (or replace existing) fields from SQL expressions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::parse_expr;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Compute fields from SQL expressions: `expressions` maps each new field name to an
/// expression over the input's columns, e.g. `{"density": "pop_est / ST_Area(geom)"}`. Every
/// expression sees the input columns (not the other new fields). An existing field is replaced.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Calculate {
    /// New field name → SQL expression.
    #[schemars(length(min = 1))]
    pub expressions: BTreeMap<String, String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Calculate {
    const NAME: &'static str = "calculate";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut set = Vec::new();
        for (name, text) in &self.expressions {
            if name == GEOM || name.trim().is_empty() {
                problems.push(Problem::new(
                    ctx.at(&format!("expressions.{name}")),
                    "cannot be used as a field name",
                ));
                continue;
            }
            match parse_expr(text, ctx, &format!("expressions.{name}")) {
                Ok(expr) => set.push((name.clone(), ValueExpr::Sql(expr), FieldType::Unknown)),
                Err(found) => problems.extend(found),
            }
        }
        if problems.is_empty() {
            Ok(vec![Operator::Map(MapOp {
                set,
                ..MapOp::default()
            })])
        } else {
            Err(problems)
        }
    }
}
