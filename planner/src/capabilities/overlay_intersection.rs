//! `overlay_intersection`: pairwise intersections of two layers, with the attributes of both.

use schemars::JsonSchema;
use serde::Deserialize;

use super::overlay_pair::OverlayPair;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode};

/// Intersect the input with `ref_layer`: one output feature per pair of an input feature and a
/// reference feature whose geometries overlap, with the geometry of their intersection, every
/// attribute of the input feature and the reference attributes named in `columns` (default:
/// all; a name the input already has is prefixed with `ref_`). Pairs whose intersection is empty are dropped, so input features touching no reference
/// feature disappear, and an input feature overlapping several reference features appears once
/// per overlap.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OverlayIntersection {
    #[serde(flatten)]
    pub pair: OverlayPair,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for OverlayIntersection {
    const NAME: &'static str = "overlay_intersection";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.pair.other_inputs()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        self.pair.lower(OverlayMode::Intersection, ctx)
    }
}
