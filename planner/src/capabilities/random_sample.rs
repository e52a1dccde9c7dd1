//! `random_sample`: keep a reproducible random sample of the features.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;

/// Keep `n` features chosen at random (all of them when the input has `n` or fewer). The
/// choice is reproducible: the same input and `seed` give the same features on every engine
/// (the order is a seeded hash of each geometry; features with equal geometries tie). Change
/// `seed` for another sample.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RandomSample {
    /// How many features to keep.
    #[schemars(range(min = 1))]
    pub n: u64,
    /// Seed of the random choice (default 42).
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_seed() -> u64 {
    42
}

impl CapabilityParams for RandomSample {
    const NAME: &'static str = "random_sample";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.n == 0 {
            return Err(vec![Problem::new(ctx.at("n"), "must be at least 1")]);
        }
        Ok(vec![Operator::Sample {
            rows: self.n,
            seed: self.seed,
        }])
    }
}
