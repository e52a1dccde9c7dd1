//! `random_sample`: keep a reproducible random sample of the features.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::numpy_sample::{NumpySampleOp, SampleSize};

/// Keep `n` features chosen at random (all of them when the input has `n` or fewer). The
/// choice is reproducible: the same input and `seed` give the same features on every engine
/// (the order is a seeded hash of each geometry; features with equal geometries tie). Change
/// `seed` for another sample. `method: numpy` draws as pandas' `sample(n, random_state=seed)`
/// does instead (NumPy's legacy MT19937: the same rows, in the same shuffled order, for the same
/// input order), and takes `fraction` (of the rows, rounded half to even) instead of `n`, and
/// `replace` (rows drawn independently, so possibly more than once).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RandomSample {
    /// How many features to keep (or give `fraction` with `method: numpy`).
    #[serde(default)]
    pub n: Option<u64>,
    /// The fraction of the features to keep, in (0, 1] (`method: numpy`).
    #[serde(default)]
    pub fraction: Option<f64>,
    /// Seed of the random choice (default 42; below 2^32 with `method: numpy`).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// `hash` (default: a seeded hash of each geometry) or `numpy` (pandas' draw).
    #[serde(default)]
    pub method: SampleMethod,
    /// Draw with replacement (`method: numpy`; default false).
    #[serde(default)]
    pub replace: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// How `random_sample` chooses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SampleMethod {
    #[default]
    Hash,
    Numpy,
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
        let size = match (self.n, self.fraction) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(vec![Problem::new(
                    ctx.at("n"),
                    "give n or fraction (one of them)",
                )]);
            }
            (Some(0), _) => return Err(vec![Problem::new(ctx.at("n"), "must be at least 1")]),
            (Some(n), None) => SampleSize::Rows(n),
            (None, Some(f)) if f > 0.0 && f <= 1.0 => SampleSize::Fraction(f),
            (None, Some(f)) => {
                return Err(vec![Problem::new(
                    ctx.at("fraction"),
                    format!("must be in (0, 1], got {f}"),
                )]);
            }
        };
        match (self.method, size) {
            (SampleMethod::Hash, SampleSize::Rows(rows)) if !self.replace => {
                Ok(vec![Operator::Sample {
                    rows,
                    seed: self.seed,
                }])
            }
            (SampleMethod::Hash, _) => Err(vec![Problem::new(
                ctx.at("method"),
                "fraction and replace need method: numpy",
            )]),
            (SampleMethod::Numpy, size) => {
                let Ok(seed) = u32::try_from(self.seed) else {
                    return Err(vec![Problem::new(
                        ctx.at("seed"),
                        "must be below 2^32 with method: numpy",
                    )]);
                };
                Ok(vec![Operator::owned(NumpySampleOp {
                    size,
                    seed,
                    replace: self.replace,
                })])
            }
        }
    }
}
