//! `pointcloud_grid_summary`: statistics of the points' heights per cell of a square grid.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::pointcloud::{GridSummaryOp, HeightStat};

/// A square grid of side `cell_size` (CRS units) anchored at the points' lowest x and y, and for
/// each cell holding points, statistics of their heights (the Z of the geometry): `row`
/// (counted up from the lowest point), `col` (right from the leftmost), `z_` + each statistic
/// of `stats` (`min`, `max`, `mean`, `median`, `std` (population), `count`, `p90`, `p95`,
/// `p99`; default `mean count`) and the cell's square, sorted by row then column. Density
/// grids, ground surfaces, canopy maxima. A point's cell is NumPy's floor division of its
/// offset by the cell size. As GISPulse's `pointcloud_grid_summary`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PointcloudGridSummary {
    /// The side of a cell in CRS units (default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 1e-9))]
    pub cell_size: f64,
    /// The statistics (default `["mean", "count"]`).
    #[serde(default)]
    pub stats: Vec<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn one() -> f64 {
    1.0
}

/// GISPulse's default statistics of `pointcloud_grid_summary`.
pub const DEFAULT_STATS: [HeightStat; 2] = [HeightStat::Mean, HeightStat::Count];

impl CapabilityParams for PointcloudGridSummary {
    const NAME: &'static str = "pointcloud_grid_summary";
    const GROUP: Group = Group::PointCloud;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.cell_size.is_finite() && self.cell_size >= 1e-9) {
            return Err(vec![Problem::new(
                ctx.at("cell_size"),
                "must be a number of at least 1e-9 (CRS units)",
            )]);
        }
        let stats = HeightStat::parse_list(&self.stats, &DEFAULT_STATS)
            .map_err(|reason| vec![Problem::new(ctx.at("stats"), reason)])?;
        Ok(vec![Operator::owned(GridSummaryOp {
            cell_size: self.cell_size,
            stats,
            classes: None,
        })])
    }
}
