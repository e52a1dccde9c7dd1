//! `continuous_ramp`: a colour per feature, interpolated along a scheme by a numeric field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::{known_scheme, numeric_field};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ScaleKind, ScaleOp};

/// Colour each feature by the numeric field `field` on a continuous ramp: the value's position
/// between the layer's minimum and maximum, `t = (x − min) / (max − min)`, picks the colour
/// along `palette` (default `viridis`) — on matplotlib's ramps the step `floor(t · 256)` of
/// 256 as matplotlib picks it; on a ColorBrewer scheme a colour interpolated in RGB between the
/// stops of its largest set. Writes `#rrggbb` into `output` (default `color`); NULL for a NULL
/// value. `reverse` runs the ramp from its other end. Runs on the native backend whatever the
/// engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ContinuousRamp {
    /// The numeric field.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The colour scheme (default `viridis`).
    #[serde(default = "default_palette")]
    pub palette: String,
    /// Run the ramp from its other end.
    #[serde(default)]
    pub reverse: bool,
    /// The colour field (default `color`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_palette() -> String {
    "viridis".into()
}

fn default_output() -> String {
    "color".into()
}

impl CapabilityParams for ContinuousRamp {
    const NAME: &'static str = "continuous_ramp";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        numeric_field(ctx, &self.field, "field")?;
        known_scheme(ctx, &self.palette, "palette")?;
        Ok(vec![Operator::Scale(ScaleOp {
            field: self.field.clone(),
            kind: ScaleKind::ColorRamp {
                scheme: self.palette.clone(),
                reverse: self.reverse,
            },
            output: self.output.clone(),
        })])
    }
}
