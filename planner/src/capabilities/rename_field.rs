//! `rename_field`: give attribute fields new names.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{MapOp, Operator};
use crate::schema::GEOM;

/// Rename attribute fields: `fields` maps each current name to its new name, e.g.
/// `{"NAME_EN": "name", "POP_EST": "population"}`. Values and types are unchanged. Every field
/// renamed must exist; a new name must not be a field of the input or another new name; the
/// geometry (`geom`) cannot be renamed and no field can be renamed to `geom`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RenameField {
    /// Current name → new name.
    #[schemars(length(min = 1))]
    pub fields: BTreeMap<String, String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for RenameField {
    const NAME: &'static str = "rename_field";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.fields.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "needs at least one field to rename",
            )]);
        }
        let mut problems = Vec::new();
        let old: Vec<String> = self.fields.keys().cloned().collect();
        if let Err(found) = require_columns(ctx.input, &old, ctx.at("fields")) {
            problems.extend(found);
        }
        let mut targets: BTreeMap<&str, &str> = BTreeMap::new();
        for (from, to) in &self.fields {
            let path = ctx.at(&format!("fields.{from}"));
            if from == GEOM {
                problems.push(Problem::new(path, "the geometry cannot be renamed"));
            } else if to == GEOM || to.trim().is_empty() {
                problems.push(Problem::new(
                    path,
                    format!("{to:?} cannot be used as a field name"),
                ));
            } else if ctx.input.is_some_and(|s| s.has(to)) {
                problems.push(Problem::new(
                    path,
                    format!("field {to} already exists in the input"),
                ));
            } else if let Some(other) = targets.insert(to, from) {
                problems.push(Problem::new(
                    path,
                    format!("{other} is also renamed to {to}"),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Map(MapOp {
            rename: self
                .fields
                .iter()
                .map(|(from, to)| (from.clone(), to.clone()))
                .collect(),
            ..MapOp::default()
        })])
    }
}
