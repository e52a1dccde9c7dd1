//! `select_columns`: keep only the named fields (and the geometry).

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{MapOp, Operator};
use crate::schema::GEOM;

/// Keep only the attribute fields `fields` (and the geometry, always kept), e.g.
/// `{"fields": ["name", "pop_est"]}`; every other field is removed. Fields keep the input's
/// order, unless `reorder` is true: then they come in the order given, followed by the
/// geometry (or with the geometry where `geom` is named in `fields`). Every field named must
/// exist; a field named twice is refused. When the input's columns are not known, the order
/// given is used.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SelectColumns {
    /// The fields to keep.
    #[schemars(length(min = 1))]
    pub fields: Vec<String>,
    /// Put the fields in the order given (default false: the input's order).
    #[serde(default)]
    pub reorder: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for SelectColumns {
    const NAME: &'static str = "select_columns";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.fields.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "needs at least one field",
            )]);
        }
        for (i, name) in self.fields.iter().enumerate() {
            if self.fields[..i].contains(name) {
                return Err(vec![Problem::new(
                    ctx.at(&format!("fields[{i}]")),
                    format!("field {name} is named twice"),
                )]);
            }
        }
        require_columns(ctx.input, &self.fields, ctx.at("fields"))?;
        let has_geom = ctx.input.is_none_or(|s| s.has(GEOM));
        let mut ordered = self.fields.clone();
        if has_geom && !ordered.iter().any(|n| n == GEOM) {
            ordered.push(GEOM.to_owned());
        }
        match ctx.input {
            // The input's order: a drop of the other columns (which pruning takes into the scan).
            Some(schema) if !self.reorder => {
                let drop: Vec<String> = schema
                    .names()
                    .into_iter()
                    .filter(|n| !ordered.iter().any(|k| k == n))
                    .map(str::to_owned)
                    .collect();
                if drop.is_empty() {
                    Ok(vec![Operator::Project {
                        columns: schema.names().into_iter().map(str::to_owned).collect(),
                    }])
                } else {
                    Ok(vec![Operator::Map(MapOp {
                        drop,
                        ..MapOp::default()
                    })])
                }
            }
            _ => Ok(vec![Operator::Project { columns: ordered }]),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Column, FieldType, Schema};

    fn schema() -> Schema {
        let column = |name: &str, ty| Column {
            name: name.into(),
            ty,
        };
        Schema {
            columns: vec![
                column("name", FieldType::Text),
                column("pop", FieldType::Double),
                column(GEOM, FieldType::Geometry),
                column("iso", FieldType::Text),
            ],
            crs: None,
        }
    }

    fn lower(params: serde_json::Value, input: Option<&Schema>) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: SelectColumns = serde_json::from_value(params).unwrap();
        params.lower(&LowerContext {
            step_id: "s",
            path: "p",
            input,
            others: &[],
            rasters: None,
        })
    }

    #[test]
    fn keeps_the_input_order_or_the_given_one() {
        let schema = schema();
        assert_eq!(
            lower(json!({"fields": ["iso", "name"]}), Some(&schema)).unwrap(),
            [Operator::Map(MapOp {
                drop: vec!["pop".into()],
                ..MapOp::default()
            })]
        );
        assert_eq!(
            lower(json!({"fields": ["iso", "name"], "reorder": true}), Some(&schema)).unwrap(),
            [Operator::Project {
                columns: vec!["iso".into(), "name".into(), GEOM.into()]
            }]
        );
        assert_eq!(
            lower(json!({"fields": ["iso"]}), None).unwrap(),
            [Operator::Project {
                columns: vec!["iso".into(), GEOM.into()]
            }]
        );
    }

    #[test]
    fn unknown_and_repeated_fields_are_named() {
        let schema = schema();
        let problems = lower(json!({"fields": ["name", "nope"]}), Some(&schema)).unwrap_err();
        assert_eq!(problems[0].path, "p.fields");
        assert!(problems[0].message.contains("nope"), "{}", problems[0].message);
        let problems = lower(json!({"fields": ["name", "name"]}), Some(&schema)).unwrap_err();
        assert_eq!(problems[0].path, "p.fields[1]");
    }
}
