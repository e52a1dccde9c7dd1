//! `min_bounding_circle`: replace every geometry by the smallest circle that contains it.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ShapeExpr};

/// Replace each geometry by the smallest circle that contains it, as a polygon of
/// `segments` vertices a quarter circle (PostGIS's `ST_MinimumBoundingCircle`): the polygon
/// is drawn around the circle (its edges touch the circle, so it contains the geometry),
/// starting at the top and running clockwise. Computed in the data's coordinates (planar,
/// also on lon/lat). A point gives a circle of radius 0 (a polygon of one repeated point is
/// not made: the point itself is returned as PostGIS does). The result is 2-D. NULL stays NULL;
/// an empty geometry stays empty. Attributes are unchanged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MinBoundingCircle {
    /// Vertices a quarter circle (1 to 360, default 8).
    #[serde(default = "default_segments")]
    #[schemars(range(min = 1, max = 360))]
    pub segments: u32,
    /// Put the vertices on the circle, from the east and clockwise, as Shapely's (GEOS's) does
    /// (default false: the polygon around the circle, as PostGIS draws it). The polygon then
    /// lies inside the circle and may not cover the geometry; runs natively on every engine.
    #[serde(default)]
    pub on_circle: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_segments() -> u32 {
    8
}

impl CapabilityParams for MinBoundingCircle {
    const NAME: &'static str = "min_bounding_circle";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(1..=360).contains(&self.segments) {
            return Err(vec![Problem::new(
                ctx.at("segments"),
                format!("must be from 1 to 360, got {}", self.segments),
            )]);
        }
        Ok(replace_geometry(GeoExpr::Shape(
            ShapeExpr::MinBoundingCircle {
                segments: self.segments,
                on_circle: self.on_circle,
            },
        )))
    }
}
