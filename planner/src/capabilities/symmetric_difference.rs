//! `symmetric_difference`: the parts of two layers that do not overlap, with their attributes.

use schemars::JsonSchema;
use serde::Deserialize;

use super::overlay_pair::OverlayPair;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode};

/// The symmetric difference of the input and `ref_layer` (GeoPandas' `overlay(how=
/// "symmetric_difference")`): each input feature with the area of the reference features it
/// overlaps removed, and each reference feature with the area of the input features it
/// overlaps removed. Input pieces keep the input's attributes with the reference attributes
/// (`columns`) NULL; reference pieces have the reference attributes and NULL input attributes.
/// A feature entirely covered by the other layer disappears; NULL geometries give no piece.
/// The columns are those of `overlay_intersection`. With `against: "union"` each input feature
/// instead becomes the symmetric difference of itself and the union of the whole reference
/// layer, one row per input feature with its own attributes (GISPulse's reading).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SymmetricDifference {
    #[serde(flatten)]
    pub pair: OverlayPair,
    /// `features` (default): the pieces of both layers; `union`: each input feature against
    /// the reference layer's union.
    #[serde(default)]
    pub against: Against,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// What each input feature is differenced against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Against {
    #[default]
    Features,
    Union,
}

impl CapabilityParams for SymmetricDifference {
    const NAME: &'static str = "symmetric_difference";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.pair.other_inputs()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        match self.against {
            Against::Features => self.pair.lower(OverlayMode::SymmetricDifference, ctx),
            Against::Union => self.pair.lower(OverlayMode::DifferenceWithUnion, ctx),
        }
    }
}
