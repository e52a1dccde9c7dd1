//! `classify_categorical`: one class per distinct value of a field, with an `other` bucket.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::classify::{default_output, known_scheme};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{ClassColors, Operator, ScaleKind, ScaleOp};

/// One class per distinct value of `field` (any type): `<output>` numbers the values from the
/// most frequent (0) down, equal counts ordered by value (or as first seen: `ties`), and
/// `<output>_label` is the value as
/// text. Past `max_classes` − 1 values, the rest share the last class, labelled `other`. With
/// `palette`, `color` gets one colour per class (a qualitative ColorBrewer scheme such as
/// `Set2` suits categories). NULL values stay unclassified (NULL in every field). Runs on the
/// native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClassifyCategorical {
    /// The field whose values are the categories.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The most classes, `other` included (default 12).
    #[serde(default = "default_max_classes")]
    #[schemars(range(min = 2, max = 256))]
    pub max_classes: u32,
    /// A colour scheme for the classes (none by default).
    #[serde(default)]
    pub palette: Option<String>,
    /// How equal counts are ordered: `value` (default) or `first_seen` (the order the values
    /// first appear in, as pandas' `value_counts`).
    #[serde(default)]
    pub ties: CategoryTies,
    /// The name of the class field (default `class`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// How `classify_categorical` orders values of equal counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CategoryTies {
    /// By value (numbers, else text).
    #[default]
    Value,
    /// In the order the values first appear.
    FirstSeen,
}

fn default_max_classes() -> u32 {
    12
}

impl CapabilityParams for ClassifyCategorical {
    const NAME: &'static str = "classify_categorical";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(2..=256).contains(&self.max_classes) {
            return Err(vec![Problem::new(
                ctx.at("max_classes"),
                "must be between 2 and 256",
            )]);
        }
        require_columns(ctx.input, std::slice::from_ref(&self.field), ctx.at("field"))?;
        if let Some(scheme) = &self.palette {
            known_scheme(ctx, scheme, "palette")?;
        }
        Ok(vec![Operator::owned(ScaleOp {
            field: self.field.clone(),
            kind: ScaleKind::Categories {
                max_classes: self.max_classes,
                colors: self.palette.as_ref().map(|scheme| ClassColors {
                    scheme: scheme.clone(),
                    reverse: false,
                    field: "color".into(),
                }),
                first_seen: self.ties == CategoryTies::FirstSeen,
            },
            output: self.output.clone(),
        })])
    }
}
