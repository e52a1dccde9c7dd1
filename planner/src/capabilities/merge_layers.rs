//! `merge_layers`: append the features of other layers to the input.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;

/// Append the features of each of `layers` (steps or dataset layers) to the input's. Columns
/// are matched by name: the output has every column of every input, NULL in the features of
/// inputs that lack it. Geometries are not reprojected: every input should be in the same CRS
/// (`reproject` first otherwise). Duplicate features are kept.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MergeLayers {
    /// The steps or dataset layers to append to the input.
    #[schemars(length(min = 1))]
    pub layers: Vec<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for MergeLayers {
    const NAME: &'static str = "merge_layers";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.layers
            .iter()
            .map(|layer| ("layers", layer.clone()))
            .collect()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.layers.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("layers"),
                "needs at least one layer to append",
            )]);
        }
        Ok(vec![Operator::Concat])
    }
}
