//! `network_extend_dangles`: dangling line ends extended onto the line they fall short of.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{LineCleanOp, Operator};

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
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkExtendDangles {
    /// The longest extension, in the CRS's units; must be > 0.
    pub max_distance: f64,
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
        Ok(vec![Operator::LineClean(LineCleanOp::ExtendDangles {
            max_distance: self.max_distance,
        })])
    }
}
