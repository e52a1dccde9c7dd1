//! `erase`: remove the area of a mask layer from every geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode, OverlayOp};

/// Remove from each input geometry the area covered by the geometries of `mask` (a step or a
/// dataset layer), the opposite of `clip`: features keep their attributes, features entirely
/// covered by the mask (left with an empty geometry) are dropped, and features the mask does
/// not touch are kept unchanged. The mask's attributes are not brought.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Erase {
    /// The step or dataset layer whose geometries are removed.
    #[schemars(length(min = 1))]
    pub mask: String,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Erase {
    const NAME: &'static str = "erase";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("mask", self.mask.clone())]
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(self.on_invalid.before(vec![Operator::Overlay(OverlayOp {
            mode: OverlayMode::Erase,
            columns: Vec::new(),
            keep_geom_type: false,
        })]))
    }
}
