//! `clip`: cut every geometry to the area of a mask layer.

use schemars::JsonSchema;
use serde::Deserialize;

use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode, OverlayOp};

/// Cut each input geometry to the union of the geometries of `mask` (a step or a dataset
/// layer): the part of a feature inside the mask is kept with all its attributes, the part
/// outside is removed, and features entirely outside the mask (whose clipped geometry is empty)
/// are dropped. The mask's attributes are not brought; use `overlay_intersection` for that.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Clip {
    /// The step or dataset layer whose geometries form the mask.
    #[schemars(length(min = 1))]
    pub mask: String,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Clip {
    const NAME: &'static str = "clip";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("mask", self.mask.clone())]
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(self.on_invalid.before(vec![Operator::Overlay(OverlayOp {
            mode: OverlayMode::Clip,
            columns: Vec::new(),
            keep_geom_type: false,
        })]))
    }
}
