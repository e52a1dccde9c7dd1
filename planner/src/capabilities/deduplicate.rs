//! `deduplicate`: keep one feature per distinct combination of field values.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{DistinctKeep, Operator};

/// Keep one feature per distinct combination of the values of `fields` (default: every
/// attribute, not the geometry), dropping the others: one feature of each group is kept, with
/// all its fields: by default the one chosen by a rule every engine follows alike (the lowest
/// hash of its geometry's WKB, the rows then ordered by the compared values); with `keep:
/// "first"` or `"last"` the first or last in input order, the rows left in input order (sort
/// first to choose by a field, as pandas' `drop_duplicates`). NULLs count as equal to each other. Name `geom` in `fields` to compare
/// geometries (exact equality). `fields` must be given when the input's columns are not known.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Deduplicate {
    /// Fields whose values must all be equal for features to be duplicates (default: every
    /// attribute).
    #[serde(default)]
    pub fields: Vec<String>,
    /// Which feature of a group is kept: `hash` (default), `first` or `last` in input order.
    #[serde(default)]
    pub keep: DistinctKeep,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Deduplicate {
    const NAME: &'static str = "deduplicate";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let columns = if self.fields.is_empty() {
            let Some(schema) = ctx.input else {
                return Err(vec![Problem::new(
                    ctx.at("fields"),
                    "give fields when the input's columns are not known",
                )]);
            };
            let names: Vec<String> = schema.attributes().map(|c| c.name.clone()).collect();
            if names.is_empty() {
                return Err(vec![Problem::new(
                    ctx.at("fields"),
                    "the input has no attributes to compare: give fields (e.g. [\"geom\"])",
                )]);
            }
            names
        } else {
            require_columns(ctx.input, &self.fields, ctx.at("fields"))?;
            self.fields.clone()
        };
        Ok(vec![Operator::Distinct {
            columns,
            keep: self.keep,
        }])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Column, FieldType, GEOM, Schema};

    #[test]
    fn default_fields_are_the_attributes() {
        let params: Deduplicate = serde_json::from_value(json!({})).unwrap();
        let schema = Schema {
            columns: vec![
                Column {
                    name: "name".into(),
                    ty: FieldType::Text,
                },
                Column {
                    name: GEOM.into(),
                    ty: FieldType::Geometry,
                },
                Column {
                    name: "kind".into(),
                    ty: FieldType::Text,
                },
            ],
            crs: None,
        };
        let ctx = LowerContext {
            step_id: "d",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        assert_eq!(
            params.lower(&ctx).unwrap(),
            [Operator::Distinct {
                columns: vec!["name".into(), "kind".into()],
                keep: DistinctKeep::Hash,
            }]
        );
        let unknown = LowerContext { input: None, ..ctx };
        assert_eq!(params.lower(&unknown).unwrap_err()[0].path, "p.fields");
    }
}
