//! `network_extend_dangles`: dangling line ends extended onto the line they fall short of.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{DangleMethod, LineCleanOp, Operator};

/// How a gap is closed.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseBy {
    /// A dangling end prolonged straight on along its last segment (the default).
    #[default]
    Extend,
    /// Every LineString end (dangling or not) moved onto the nearest point of the nearest
    /// other feature within `max_distance`, as GISPulse closes gaps.
    NearestPoint,
}

/// Extends dangling line ends that fall short of another line (undershoots): a *dangling end*
/// is the end of a line part (LineStrings and the parts of MultiLineStrings) that no other end
/// shares (coordinates exactly equal) and that touches no other feature's line. Each one is
/// prolonged straight on, in the direction of its last segment (from the last vertex before it
/// that differs from it), up to `max_distance`: when that stretch meets another feature's line,
/// the end vertex is moved to the nearest meeting point; otherwise the line is left as it was.
/// The lines met are the input's (extensions never meet each other); a line is never extended
/// onto itself. Distances are planar, in the CRS's units (degrees on longitude/latitude).
/// Attributes and rows are unchanged; NULL and empty geometries and geometries other than
/// lines pass through unchanged (and are never met). Runs on the native backend on every
/// engine.
///
/// With `method: nearest_point` (GISPulse's rule): each end of each LineString (start, then
/// end; MultiLineStrings pass through unchanged), whether it dangles or not, is moved onto the
/// nearest point of the nearest other feature of any geometry type (points and polygons too, as
/// the input has them) when that distance is more than 0 and at most `max_distance`; an end
/// already touching another feature stays. Equally near features: the one whose nearest point
/// comes first by x then y (GISPulse takes the first its R-tree lists).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkExtendDangles {
    /// The longest extension, in the CRS's units; must be > 0.
    pub max_distance: f64,
    /// `extend` (default) or `nearest_point`.
    #[serde(default)]
    pub method: CloseBy,
    /// Work in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the lines are transformed to it, cleaned there, and transformed back. Default:
    /// the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for NetworkExtendDangles {
    const NAME: &'static str = "network_extend_dangles";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.max_distance.is_finite() && self.max_distance > 0.0) {
            return Err(vec![Problem::new(
                ctx.at("max_distance"),
                "must be a number greater than 0",
            )]);
        }
        let op = LineCleanOp::ExtendDangles {
            max_distance: self.max_distance,
            method: match self.method {
                CloseBy::Extend => DangleMethod::Extend,
                CloseBy::NearestPoint => DangleMethod::NearestPoint,
            },
        };
        super::work_crs::operator_within(self.work_crs.as_deref(), ctx, Operator::owned(op))
    }
}
