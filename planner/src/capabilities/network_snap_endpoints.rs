//! `network_snap_endpoints`: line endpoints moved onto nearby endpoints (or lines) of other
//! lines.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{LineCleanOp, Operator, SnapRule, SnapTarget};

/// How the ends are grouped.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapGrouping {
    /// Ends in x-then-y order onto kept points (the default).
    #[default]
    KeptPoints,
    /// GISPulse's grid buckets (see the capability).
    GridBuckets,
}

/// What an endpoint may be moved onto.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapOnto {
    /// An endpoint of another line (the default).
    #[default]
    Endpoints,
    /// An endpoint of another line within the tolerance, else the nearest point (a vertex or
    /// a point of a segment) of another line.
    Lines,
}

/// Moves the endpoints of the lines onto the endpoints of other lines less than `tolerance`
/// away, closing the small gaps of a line network (digitized ends that miss each other). The
/// rule, the same on every engine (it runs on the native backend): every end of every line
/// part (LineStrings and the parts of MultiLineStrings) is taken in the order of its x, then
/// its y; an end already on a *kept point* stays there; another moves onto the nearest kept
/// point within `tolerance` (distance ≤ `tolerance`, ties by the point's x then y) that holds
/// no end of its own feature, and joins it; an end with none stays where it is and becomes a
/// kept point. So ends closer than the
/// tolerance meet at the first of them (westernmost), a feature never snaps onto itself, and
/// two ends of one feature never meet at a point where they did not already. With `target:
/// lines`, an end that finds no kept point moves onto the nearest point of another feature's
/// line (as that line was before snapping; ties by x then y), which then becomes a kept
/// point; the line it lands on is not split there (run `network_node_lines` after). Only the
/// first and last vertex of a part move; Z values are kept. Distances are planar, in the
/// CRS's units (degrees on longitude/latitude). Attributes and rows are unchanged; NULL and
/// empty geometries and geometries other than lines pass through unchanged (and are never
/// snapped onto).
///
/// With `rule: grid_buckets` (GISPulse's rule): only LineStrings take part (MultiLineStrings
/// pass through). Their ends are taken in row order (a row's start, then its end); each lies in
/// the cell (x / tolerance, y / tolerance rounded half to even) of a grid; it joins the first
/// bucket, of the 3×3 cells around its own (column by column from the west, each from the
/// south), whose mean position so far is at most `tolerance` away, or else starts a bucket in
/// its own cell (a bucket already there is emptied: its earlier ends follow the new one).
/// Every end then moves to the mean of its bucket, so two ends of one line may meet.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkSnapEndpoints {
    /// The largest distance an end moves, in the CRS's units; must be > 0.
    pub tolerance: f64,
    /// `endpoints` (default) or `lines`.
    #[serde(default)]
    pub target: SnapOnto,
    /// `kept_points` (default) or `grid_buckets` (with `target: endpoints`).
    #[serde(default)]
    pub rule: SnapGrouping,
    /// Work in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the lines are transformed to it, cleaned there, and transformed back. Default:
    /// the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for NetworkSnapEndpoints {
    const NAME: &'static str = "network_snap_endpoints";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(vec![Problem::new(
                ctx.at("tolerance"),
                "must be a number greater than 0",
            )]);
        }
        let rule = match self.rule {
            SnapGrouping::KeptPoints => SnapRule::KeptPoints,
            SnapGrouping::GridBuckets => SnapRule::GridBuckets,
        };
        let target = match self.target {
            SnapOnto::Endpoints => SnapTarget::Endpoints,
            SnapOnto::Lines => SnapTarget::Lines,
        };
        if rule == SnapRule::GridBuckets && target == SnapTarget::Lines {
            return Err(vec![Problem::new(
                ctx.at("target"),
                "rule grid_buckets snaps ends onto ends only: leave target out or set it to endpoints",
            )]);
        }
        let op = LineCleanOp::SnapEndpoints {
            tolerance: self.tolerance,
            target,
            rule,
        };
        super::work_crs::operator_within(self.work_crs.as_deref(), ctx, Operator::owned(op))
    }
}
