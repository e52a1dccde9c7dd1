//! `bivariate_choropleth`: two fields classified together, a colour per pair of classes.

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::{default_output, known_scheme, numeric_field};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{ClassMethod, Operator, ScaleKind, ScaleOp};

/// Classify two numeric fields, `field_x` and `field_y`, each into `classes` classes (2 to 4,
/// default 3) by `method` (default `quantile`, breaks as mapclassify computes them over the
/// features that have both values), and colour
/// each of the `classes × classes` pairs: `<output>_x` and `<output>_y` are the two classes,
/// `<output>` is `y · classes + x`, and `color` blends the colour of the x class on the
/// sequential scheme `palette_x` (default `Blues`) with that of the y class on `palette_y`
/// (default `Reds`) by multiplying their channels, so the low–low corner is the lightest and
/// high–high the darkest. A feature with either value NULL stays unclassified. Runs on the
/// native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BivariateChoropleth {
    /// The field classified along x.
    #[schemars(length(min = 1))]
    pub field_x: String,
    /// The field classified along y.
    #[schemars(length(min = 1))]
    pub field_y: String,
    /// Classes per field, 2 to 4 (default 3).
    #[serde(default = "default_classes")]
    #[schemars(range(min = 2, max = 4))]
    pub classes: u32,
    /// How each field's breaks are computed (default `quantile`).
    #[serde(default = "default_method")]
    pub method: ClassMethod,
    /// The scheme of the x classes (default `Blues`).
    #[serde(default = "default_palette_x")]
    pub palette_x: String,
    /// The scheme of the y classes (default `Reds`).
    #[serde(default = "default_palette_y")]
    pub palette_y: String,
    /// The name of the class field (default `class`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_classes() -> u32 {
    3
}

fn default_method() -> ClassMethod {
    ClassMethod::Quantile
}

fn default_palette_x() -> String {
    "Blues".into()
}

fn default_palette_y() -> String {
    "Reds".into()
}

impl CapabilityParams for BivariateChoropleth {
    const NAME: &'static str = "bivariate_choropleth";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(2..=4).contains(&self.classes) {
            return Err(vec![Problem::new(ctx.at("classes"), "must be 2, 3 or 4")]);
        }
        numeric_field(ctx, &self.field_x, "field_x")?;
        numeric_field(ctx, &self.field_y, "field_y")?;
        known_scheme(ctx, &self.palette_x, "palette_x")?;
        known_scheme(ctx, &self.palette_y, "palette_y")?;
        Ok(vec![Operator::owned(ScaleOp {
            field: self.field_x.clone(),
            kind: ScaleKind::Bivariate {
                other: self.field_y.clone(),
                method: self.method,
                classes: self.classes,
                schemes: (self.palette_x.clone(), self.palette_y.clone()),
                color_field: "color".into(),
            },
            output: self.output.clone(),
        })])
    }
}
