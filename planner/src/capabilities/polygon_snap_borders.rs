//! `polygon_snap_borders`: neighbouring polygons' borders snapped together.

use schemars::JsonSchema;
use serde::Deserialize;

use super::cleaning_checks::positive;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{CleanOp, Operator};

/// Snap the borders of neighbouring polygons together: the features are taken in row order,
/// and each is snapped (GEOS `Snap`: its vertices moved onto the other geometry's vertices
/// within `tolerance`, then onto its segments) to the already snapped features before it that
/// lie within `tolerance` of it, so the first row never moves and a later feature follows the
/// borders of the earlier ones. A snapped geometry that is not valid is made valid (GEOS
/// `MakeValid`, polygonal parts kept), so every polygon out is valid. Distances are planar, in
/// CRS units (degrees on longitude/latitude data). A feature with nothing within `tolerance`
/// keeps its geometry unchanged (made valid if it was not). NULL and empty geometries, points
/// and lines pass through unchanged and take no part. Runs on the native backend (GEOS) in
/// every engine mode.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PolygonSnapBorders {
    /// The snapping distance in CRS units (above 0).
    pub tolerance: f64,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for PolygonSnapBorders {
    const NAME: &'static str = "polygon_snap_borders";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        positive(self.tolerance, ctx, "tolerance")?;
        Ok(vec![Operator::owned(CleanOp::SnapBorders {
            tolerance: self.tolerance,
        })])
    }
}
