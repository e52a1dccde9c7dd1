//! `concave_hull`: replace every geometry by a concave hull of its vertices.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ShapeExpr};

/// Replace each geometry by a concave hull of its vertices, as GEOS 3.12+ (Shapely 2's
/// `concave_hull`, DuckDB's `ST_ConcaveHull`) computes it: the Delaunay triangles of the
/// vertices, taken off from the border, longest edge first, while their edges are longer than
/// `ratio` of the way from the shortest to the longest triangulation edge and the hull stays
/// one polygon. `ratio` 1 gives the convex hull, 0 the tightest hull. With `allow_holes`,
/// large triangles inside are taken off too, leaving holes. Planar, in the data's
/// coordinates (also on lon/lat); 2-D. A geometry with fewer than three vertices off one
/// line gives its convex hull (a point or a line); an empty one an empty polygon; NULL stays
/// NULL. Attributes are unchanged. On PostGIS (whose GEOS 3.11 has an older algorithm) it
/// runs natively, the same algorithm.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ConcaveHull {
    /// From 0 (tightest) to 1 (the convex hull); default 0.3.
    #[serde(default = "default_ratio")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub ratio: f64,
    /// Let the hull have holes (default false).
    #[serde(default)]
    pub allow_holes: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_ratio() -> f64 {
    0.3
}

impl CapabilityParams for ConcaveHull {
    const NAME: &'static str = "concave_hull";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(0.0..=1.0).contains(&self.ratio) {
            return Err(vec![Problem::new(
                ctx.at("ratio"),
                "must be between 0 and 1",
            )]);
        }
        Ok(replace_geometry(GeoExpr::Shape(ShapeExpr::ConcaveHull {
            ratio: self.ratio,
            holes: self.allow_holes,
        })))
    }
}
