//! `normalize`: rescale a numeric field over the layer (log1p, min–max, z-score).

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::numeric_field;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{NormalizeMethod, Operator, ScaleKind, ScaleOp};

/// Rescale the numeric field `field` into `output` (default `<field>_<method>`): `log1p` is
/// `ln(1 + x)` (NULL for x ≤ −1), `minmax` is `(x − min) / (max − min)` over the layer (0 to
/// 1; 0 everywhere when all values are equal), `zscore` is `(x − mean) / standard deviation`
/// with the population standard deviation, as `scipy.stats.zscore` (0 everywhere when all
/// values are equal). NULL and NaN values stay NULL and take no part in the statistics. Runs on
/// the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Normalize {
    /// The numeric field to rescale.
    #[schemars(length(min = 1))]
    pub field: String,
    /// `log1p`, `minmax` or `zscore`.
    pub method: NormalizeMethod,
    /// The field to write (default `<field>_<method>`).
    #[serde(default)]
    pub output: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Normalize {
    const NAME: &'static str = "normalize";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        numeric_field(ctx, &self.field, "field")?;
        Ok(vec![Operator::Scale(ScaleOp {
            field: self.field.clone(),
            kind: ScaleKind::Normalize(self.method),
            output: self
                .output
                .clone()
                .unwrap_or_else(|| format!("{}_{}", self.field, self.method.as_str())),
        })])
    }
}
