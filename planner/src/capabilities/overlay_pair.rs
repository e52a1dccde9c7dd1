//! The parameters and lowering the pairwise overlays share (`overlay_intersection`,
//! `symmetric_difference`, `overlay_union`): the other layer, its attributes to bring, and
//! what to do with invalid geometries.

use schemars::JsonSchema;
use serde::Deserialize;

use super::LowerContext;
use super::checks::require_columns;
use super::invalid::OnInvalid;
use super::spatial_join::suffixed;
use crate::error::Problem;
use crate::plan::operator::{Operator, OverlayMode, OverlayOp};

/// The other layer of a pairwise overlay.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OverlayPair {
    /// The step or dataset layer to overlay with.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Reference attributes to bring (default: all; a name the input already has is prefixed
    /// with `ref_`).
    #[serde(default)]
    pub columns: Vec<String>,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    /// Keep only the parts of each intersection of the input feature's dimension (default
    /// false: every non-empty intersection, a line where two polygons touch along an edge).
    #[serde(default)]
    pub keep_geom_type: bool,
    /// Suffixes for a name both layers have, appended to the input's field and to the
    /// reference's (`["_1", "_2"]`, as GeoPandas' overlay names them) instead of `ref_`.
    #[serde(default)]
    pub suffixes: Option<[String; 2]>,
}

impl OverlayPair {
    pub fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    /// The overlay in `mode`, after the invalid-geometry handling.
    pub fn lower(
        &self,
        mode: OverlayMode,
        ctx: &LowerContext<'_>,
    ) -> Result<Vec<Operator>, Vec<Problem>> {
        require_columns(
            ctx.others.first().copied().flatten(),
            &self.columns,
            ctx.at("columns"),
        )?;
        let mut operators = self.on_invalid.before(vec![Operator::Overlay(OverlayOp {
            mode,
            columns: self.columns.clone(),
            keep_geom_type: self.keep_geom_type,
        })]);
        if let Some(suffixes) = &self.suffixes {
            operators.extend(suffixed(suffixes, &self.columns, ctx)?);
        }
        Ok(operators)
    }
}
