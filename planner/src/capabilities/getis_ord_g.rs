//! `getis_ord_g`: global Getis-Ord G and local Gi / Gi* hot spots of a numeric field.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checks::require_columns;
use super::morans_i::default_permutations;
use super::weights::WeightsParams;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, StatisticKind, StatisticOp, WeightsTransform};

/// Hot and cold spots of `field` by Getis-Ord statistics, as PySAL computes them: the global
/// G on binary weights (`esda.G`) on every row (`<output>_global_g`, its expectation,
/// variance, z-score, normal and permutation p-values) and per feature the local statistic on
/// row-standardised weights (`esda.G_Local`): `<output>_g`, its z-score `<output>_z` (above 0:
/// a hot spot), its normal p-value `<output>_p_norm` and permutation p-value
/// `<output>_p_sim`. `star` (default true) counts each feature among its own neighbours
/// (Gi*). Values should be positive. Features with a NULL value or geometry take no part and
/// get NULL. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetisOrdG {
    /// The numeric field.
    #[schemars(length(min = 1))]
    pub field: String,
    #[serde(flatten)]
    pub weights: WeightsParams,
    /// Gi* (the feature among its own neighbours; default) or Gi.
    #[serde(default = "default_star")]
    pub star: bool,
    /// The weights of the local statistic: `row` (row-standardised, esda's default) or
    /// `binary` (1 per neighbour; with `star` every feature, an island too, its own neighbour:
    /// the Getis–Ord 1995 Gi* GISPulse computes).
    #[serde(default)]
    pub local_weights: LocalWeights,
    /// Random permutations for the pseudo p-values (default 999; 0: none).
    #[serde(default = "default_permutations")]
    #[schemars(range(max = 99999))]
    pub permutations: u32,
    /// Seed of the permutations (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Prefix of the added fields (default `gi`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// The weights the local Getis–Ord statistic is computed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LocalWeights {
    /// Row-standardised (esda's `G_Local` default).
    #[default]
    Row,
    /// 1 per neighbour.
    Binary,
}

fn default_star() -> bool {
    true
}

fn default_output() -> String {
    "gi".into()
}

impl CapabilityParams for GetisOrdG {
    const NAME: &'static str = "getis_ord_g";
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
        let weights = self.weights.lower(WeightsTransform::Original, ctx)?;
        Ok(vec![Operator::owned(StatisticOp {
            field: Some(self.field.clone()),
            weights,
            kind: StatisticKind::GetisOrd {
                star: self.star,
                binary_local: self.local_weights == LocalWeights::Binary,
                permutations: self.permutations,
                seed: self.seed,
            },
            output: self.output.clone(),
        })])
    }
}
