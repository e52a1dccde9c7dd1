//! `oriented_bbox`: replace every geometry by its minimum rotated rectangle.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ShapeExpr};

/// Replace each geometry by its oriented bounding box: the rotated rectangle of least area
/// that contains it (unlike `envelope`, its sides need not be parallel to the axes; as
/// DuckDB's and GEOS 3.12's `MinimumRotatedRectangle`; PostGIS 3.3's `ST_OrientedEnvelope`
/// gives the rectangle of least width instead, so on PostGIS this runs natively). Computed in the data's coordinates (planar, also on lon/lat).
/// A geometry without area gives what GEOS gives: a point for a point, a line for collinear
/// vertices. NULL stays NULL; an empty geometry is left as it is. Attributes are unchanged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OrientedBbox {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for OrientedBbox {
    const NAME: &'static str = "oriented_bbox";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(replace_geometry(GeoExpr::Shape(ShapeExpr::OrientedEnvelope)))
    }
}
