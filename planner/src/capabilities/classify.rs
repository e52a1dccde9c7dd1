//! `classify`: sort a numeric field's values into classes and give each feature its class.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{ClassColors, ClassMethod, Operator};
use crate::plan::ops::classify::ClassifyOp;
use crate::schema::{FieldType, Schema};

/// Classify the numeric field `field` into `classes` classes by `method`, with breaks computed
/// over every feature's value exactly as PySAL's mapclassify computes them (the same breaks
/// for the same data), and add three fields: `<output>` (the class, 0 for the lowest), and
/// `<output>_lower` and `<output>_upper` (its bounds: a value belongs to the first class whose
/// upper bound is at least the value; the lowest class's lower bound is the minimum). A NULL
/// (or NaN) value stays unclassified: NULL in all three. Fewer distinct values than classes
/// gives as many classes as there are values. Runs on the native backend whatever the engine
/// (the data moves there and back).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Classify {
    /// The numeric field to classify.
    #[schemars(length(min = 1))]
    pub field: String,
    /// How the breaks are computed (default `jenks`, natural breaks).
    #[serde(default = "default_method")]
    pub method: ClassMethod,
    /// How many classes (default 5); `std_dev` and `head_tail_breaks` choose their own count
    /// and `pretty` may give a few more or less.
    #[serde(default = "default_classes")]
    #[schemars(range(min = 2, max = 32))]
    pub classes: u32,
    /// The name of the class field; the bounds are `<output>_lower` and `<output>_upper`
    /// (default `class`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    /// A field to give, on every row, how many classes the breaks made (fewer than `classes`
    /// when values repeat); none by default.
    #[serde(default)]
    pub count_field: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

pub(super) fn default_method() -> ClassMethod {
    ClassMethod::Jenks
}

pub(super) fn default_classes() -> u32 {
    5
}

pub(super) fn default_output() -> String {
    "class".to_owned()
}

/// The classification step, after checking the field, the class count and the colour scheme.
pub(super) fn classify_op(
    ctx: &LowerContext<'_>,
    field: &str,
    method: ClassMethod,
    classes: u32,
    output: &str,
    colors: Option<ClassColors>,
) -> Result<ClassifyOp, Vec<Problem>> {
    if let Some(colors) = &colors {
        known_scheme(ctx, &colors.scheme, "palette")?;
    }
    if !(2..=32).contains(&classes) {
        return Err(vec![Problem::new(
            ctx.at("classes"),
            "must be between 2 and 32",
        )]);
    }
    numeric_field(ctx, field, "field")?;
    Ok(ClassifyOp {
        field: field.to_owned(),
        method,
        classes,
        output: output.to_owned(),
        colors,
        count: None,
    })
}

/// Checks that the input (when known) has `field` (the parameter `param`) and that it holds
/// numbers.
pub(super) fn numeric_field(
    ctx: &LowerContext<'_>,
    field: &str,
    param: &str,
) -> Result<(), Vec<Problem>> {
    require_columns(ctx.input, &[field.to_owned()], ctx.at(param))?;
    if let Some(ty) = ctx.input.and_then(|schema| field_type(schema, field))
        && !matches!(ty, FieldType::Integer | FieldType::Double | FieldType::Unknown)
    {
        return Err(vec![Problem::new(
            ctx.at(param),
            format!("{field} is not numeric (it holds {ty:?} values): the step needs numbers"),
        )]);
    }
    Ok(())
}

/// Checks that `scheme` (the parameter `param`) names a known colour scheme.
pub(super) fn known_scheme(
    ctx: &LowerContext<'_>,
    scheme: &str,
    param: &str,
) -> Result<(), Vec<Problem>> {
    if crate::palettes::colors(scheme, 1).is_some() {
        return Ok(());
    }
    let names: Vec<&str> = crate::palettes::schemes().iter().map(|(n, _)| *n).collect();
    Err(vec![Problem::new(
        ctx.at(param),
        format!(
            "unknown colour scheme {scheme:?} (known: {})",
            names.join(", ")
        ),
    )])
}

fn field_type(schema: &Schema, name: &str) -> Option<FieldType> {
    schema
        .columns
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.ty)
}

impl CapabilityParams for Classify {
    const NAME: &'static str = "classify";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let op = classify_op(ctx, &self.field, self.method, self.classes, &self.output, None)?;
        Ok(vec![Operator::owned(ClassifyOp {
            count: self.count_field.clone(),
            ..op
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Column;

    fn ctx(schema: &Schema) -> LowerContext<'_> {
        LowerContext {
            step_id: "c",
            path: "p",
            input: Some(schema),
            others: &[],
            rasters: None,
        }
    }

    #[test]
    fn lowers_to_one_classify_step_with_defaults() {
        let schema = Schema {
            columns: vec![
                Column {
                    name: "pop".into(),
                    ty: FieldType::Integer,
                },
                Column {
                    name: "name".into(),
                    ty: FieldType::Text,
                },
            ],
            crs: None,
        };
        let params: Classify = serde_json::from_value(json!({"field": "pop"})).unwrap();
        assert_eq!(
            params.lower(&ctx(&schema)).unwrap(),
            [Operator::owned(ClassifyOp {
                field: "pop".into(),
                method: ClassMethod::Jenks,
                classes: 5,
                output: "class".into(),
                colors: None,
                count: None,
            })]
        );
        let text: Classify = serde_json::from_value(json!({"field": "name"})).unwrap();
        assert_eq!(text.lower(&ctx(&schema)).unwrap_err()[0].path, "p.field");
        let unknown: Classify = serde_json::from_value(json!({"field": "nope"})).unwrap();
        assert_eq!(unknown.lower(&ctx(&schema)).unwrap_err()[0].path, "p.field");
        let one: Classify =
            serde_json::from_value(json!({"field": "pop", "classes": 1})).unwrap();
        assert_eq!(one.lower(&ctx(&schema)).unwrap_err()[0].path, "p.classes");
    }
}
