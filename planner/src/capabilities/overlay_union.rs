//! `overlay_union`: the union overlay of two layers, every area once per overlapping pair.

use schemars::JsonSchema;
use serde::Deserialize;

use super::overlay_pair::OverlayPair;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode};

/// The union overlay of the input and `ref_layer` (GeoPandas' `overlay(how="union")`, QGIS's
/// Union): the pairwise intersections with the attributes of both (as `overlay_intersection`)
/// plus the parts of each layer outside the other with their own attributes and NULL for the
/// other's (as `symmetric_difference`). Where features of one layer overlap each other, their
/// areas are not merged: each piece comes from one pair. NULL geometries give no piece.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OverlayUnion {
    #[serde(flatten)]
    pub pair: OverlayPair,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for OverlayUnion {
    const NAME: &'static str = "overlay_union";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.pair.other_inputs()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        self.pair.lower(OverlayMode::Union, ctx)
    }
}
