//! `graduated_size`: a symbol size per feature, scaled by a numeric field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::numeric_field;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ScaleKind, ScaleOp};

/// A symbol size per feature from the numeric field `field`: `min_size + (max_size −
/// min_size) · t` with `t = (x − min) / (max − min)` over the layer, or with `t` the same
/// position of `sqrt(x)` between `sqrt(min)` and `sqrt(max)` when `scale` is `sqrt` (so that a
/// circle's area, not its radius, follows the value; values must then be ≥ 0). Written to
/// `output` (default `size`); NULL for a NULL value, `min_size` everywhere when all values are
/// equal. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GraduatedSize {
    /// The numeric field.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The size of the smallest value (default 2).
    #[serde(default = "default_min")]
    pub min_size: f64,
    /// The size of the largest value (default 24).
    #[serde(default = "default_max")]
    pub max_size: f64,
    /// `linear` (default) or `sqrt`.
    #[serde(default)]
    pub scale: SizeScale,
    /// The size field (default `size`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// How sizes follow values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SizeScale {
    #[default]
    Linear,
    Sqrt,
}

fn default_min() -> f64 {
    2.0
}

fn default_max() -> f64 {
    24.0
}

fn default_output() -> String {
    "size".into()
}

impl CapabilityParams for GraduatedSize {
    const NAME: &'static str = "graduated_size";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        numeric_field(ctx, &self.field, "field")?;
        if !(self.min_size.is_finite() && self.max_size.is_finite() && self.min_size >= 0.0)
            || self.max_size < self.min_size
        {
            return Err(vec![Problem::new(
                ctx.at("max_size"),
                "sizes must be finite, min_size ≥ 0 and max_size ≥ min_size",
            )]);
        }
        Ok(vec![Operator::owned(ScaleOp {
            field: self.field.clone(),
            kind: ScaleKind::SymbolSize {
                min: self.min_size,
                max: self.max_size,
                sqrt: self.scale == SizeScale::Sqrt,
            },
            output: self.output.clone(),
        })])
    }
}
