//! `overlay_intersection`: pairwise intersections of two layers, with the attributes of both.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode, OverlayOp};

/// Intersect the input with `ref_layer`: one output feature per pair of an input feature and a
/// reference feature whose geometries overlap, with the geometry of their intersection, every
/// attribute of the input feature and the reference attributes named in `columns` (default:
/// all; a name the input already has is prefixed with `ref_`). Pairs whose intersection is empty are dropped, so input features touching no reference
/// feature disappear, and an input feature overlapping several reference features appears once
/// per overlap.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OverlayIntersection {
    /// The step or dataset layer to intersect with.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Reference attributes to bring (default: all).
    #[serde(default)]
    pub columns: Vec<String>,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
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
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        require_columns(
            ctx.others.first().copied().flatten(),
            &self.columns,
            ctx.at("columns"),
        )?;
        Ok(self.on_invalid.before(vec![Operator::Overlay(OverlayOp {
            mode: OverlayMode::Intersection,
            columns: self.columns.clone(),
        })]))
    }
}
