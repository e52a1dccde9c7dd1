//! `chaikin_smooth`: smooth lines and polygon rings by Chaikin's corner cutting.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ShapeExpr};

/// Smooth lines and polygons with Chaikin's algorithm (PostGIS's `ST_ChaikinSmoothing`): each
/// iteration replaces every segment by two points at a quarter and three quarters of its
/// length, cutting the corners; a line keeps its two end points, a ring stays closed. Each
/// iteration doubles the vertex count: `iterations` is 1 to 5. Points are left as they are.
/// The result is 2-D (Z and M are dropped). NULL stays NULL; an empty geometry stays empty.
/// Attributes are unchanged. `every_segment: true` cuts as GISPulse does: a line keeps both
/// points of its first and last segments too (and two-point lines are cut), and holes are cut
/// as open lines from their first vertex (runs natively on every engine).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ChaikinSmooth {
    /// How many times to cut the corners (1 to 5, default 1).
    #[serde(default = "default_iterations")]
    #[schemars(range(min = 1, max = 5))]
    pub iterations: u32,
    /// Cut every segment of lines and holes, as GISPulse does (default false).
    #[serde(default)]
    pub every_segment: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_iterations() -> u32 {
    1
}

impl CapabilityParams for ChaikinSmooth {
    const NAME: &'static str = "chaikin_smooth";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(1..=5).contains(&self.iterations) {
            return Err(vec![Problem::new(
                ctx.at("iterations"),
                format!("must be from 1 to 5, got {}", self.iterations),
            )]);
        }
        Ok(replace_geometry(GeoExpr::Shape(ShapeExpr::Chaikin {
            iterations: self.iterations,
            every_segment: self.every_segment,
        })))
    }
}
