//! `morans_i`: global and local Moran's I of a numeric field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::weights::WeightsParams;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, StatisticKind, StatisticOp, WeightsTransform};

/// Spatial autocorrelation of `field` by Moran's I, as PySAL's `esda.Moran` and
/// `esda.Moran_Local` compute it with their default row-standardised weights. Adds per feature the
/// local Moran `<output>_i`, its quadrant `<output>_quadrant` (`HH`, `LH`, `LL`, `HL`: the
/// feature's value and its neighbours' mean above or below the mean) and its permutation
/// p-value `<output>_p_sim`; and on every row the global statistic: `<output>_global_i`, its
/// expectation, variance, z-score and two-sided normal p-value under normality, and its
/// permutation p-value. Permutations are drawn from a generator seeded by `seed` (the same
/// seed, the same p-values). Features with a NULL value or geometry take no part and get NULL;
/// islands get a local value of 0. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MoransI {
    /// The numeric field.
    #[schemars(length(min = 1))]
    pub field: String,
    #[serde(flatten)]
    pub weights: WeightsParams,
    /// Random permutations for the pseudo p-values (default 999; 0: none).
    #[serde(default = "default_permutations")]
    #[schemars(range(max = 99999))]
    pub permutations: u32,
    /// Seed of the permutations (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Prefix of the added fields (default `moran`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

pub(super) fn default_permutations() -> u32 {
    999
}

fn default_output() -> String {
    "moran".into()
}

impl CapabilityParams for MoransI {
    const NAME: &'static str = "morans_i";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        require_columns(
            ctx.input,
            std::slice::from_ref(&self.field),
            ctx.at("field"),
        )?;
        let weights = self.weights.lower(WeightsTransform::Row, ctx)?;
        Ok(vec![Operator::owned(StatisticOp {
            field: Some(self.field.clone()),
            weights,
            kind: StatisticKind::Moran {
                permutations: self.permutations,
                seed: self.seed,
            },
            output: self.output.clone(),
        })])
    }
}
