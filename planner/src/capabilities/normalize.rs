//! `normalize`: rescale a numeric field over the layer (log1p, min–max, z-score).

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::numeric_field;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{NormalizeMethod, Operator, ScaleKind, ScaleOp};

/// Rescale the numeric field `field` into `output` (default `<field>_<method>`): `log1p` is
/// `ln(1 + x)` (NULL for x ≤ −1), `log` is `ln(x)` (NULL for x ≤ 0), `minmax` is
/// `(x − min) / (max − min)` over the layer (0 to 1; `equal_value`, default 0, everywhere when
/// all values are equal), `zscore` is `(x − mean) / standard deviation` with the population
/// standard deviation, as `scipy.stats.zscore` (0 everywhere when all values are equal),
/// `rank` is `(rank − 1) / (n − 1)` with ties given their average rank, as pandas ranks (1
/// when there is one value), `percent` is `100 · x / Σx` (0 everywhere when the sum is 0). NULL and NaN values stay NULL and take no part in the statistics. Runs on
/// the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Normalize {
    /// The numeric field to rescale.
    #[schemars(length(min = 1))]
    pub field: String,
    /// `log1p`, `log`, `minmax`, `zscore`, `rank` or `percent`.
    pub method: NormalizeMethod,
    /// `minmax`'s value when every value is the same (default 0).
    #[serde(default)]
    pub equal_value: f64,
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
        Ok(vec![Operator::owned(ScaleOp {
            field: self.field.clone(),
            kind: ScaleKind::Normalize {
                method: self.method,
                equal_value: self.equal_value,
            },
            output: self
                .output
                .clone()
                .unwrap_or_else(|| format!("{}_{}", self.field, self.method.as_str())),
        })])
    }
}
