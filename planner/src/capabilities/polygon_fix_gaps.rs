//! `polygon_fix_gaps`: small holes between the layer's polygons filled into a neighbour.

use schemars::JsonSchema;
use serde::Deserialize;

use super::cleaning_checks::positive;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{CleanOp, Operator};

/// Fill the gaps between the layer's polygons: a gap is a hole of the union of every polygon
/// of the layer (an area enclosed by the polygons, inside the union's outer shells, less any
/// polygons lying inside it) whose area is at most `max_area`. Each gap is unioned into the
/// feature sharing the longest border with it (measured as the perimeter of the gap's part
/// within 1e-6 CRS units of the feature, about twice the border: the union moves vertices by
/// rounding, so a gap's outline rarely lies exactly on its neighbours'; equal lengths go to
/// the earlier row), so the layer's total area grows by
/// the gaps' area and nothing else moves. Larger holes (lakes, enclaves of other layers) and
/// areas open to the outside stay as they are. Areas and lengths are planar, in CRS units (of `work_crs`
/// when given; square degrees on longitude/latitude data). Invalid polygons are made valid first (GEOS
/// `MakeValid`, polygonal parts); a feature that receives a gap becomes one Polygon or a
/// MultiPolygon, the others keep their geometry unchanged. NULL and empty geometries, points
/// and lines pass through unchanged and take no part. Runs on the native backend (GEOS) in
/// every engine mode.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PolygonFixGaps {
    /// The largest gap filled, in square CRS units (above 0).
    pub max_area: f64,
    /// Clean in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the geometry is transformed to it, cleaned there (areas and lengths in its
    /// units), and transformed back. Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for PolygonFixGaps {
    const NAME: &'static str = "polygon_fix_gaps";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| self.lower_here(ctx),
        )
    }
}

impl PolygonFixGaps {
    fn lower_here(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        positive(self.max_area, ctx, "max_area")?;
        Ok(vec![Operator::owned(CleanOp::FixGaps {
            max_area: self.max_area,
        })])
    }
}
