//! `pointcloud_zonal_height`: statistics of the heights of the points within each polygon.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{check_new_field, require_columns};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::pointcloud::{Height, HeightStat, ZonalHeightOp};

/// For each polygon, statistics of the heights (the Z of the geometry) of the `ref_layer`
/// points within it: building heights per footprint, canopy heights per parcel. A point on a
/// polygon's boundary is left out and a point inside two polygons counts in both. `stats`
/// names them (`min`, `max`, `mean`, `median`, `std` (population), `count`, `p90`, `p95`,
/// `p99`: NumPy's linear percentiles; default `max min mean count`), each added as `prefix` +
/// name (default `z_`). Then `{prefix}height`: the highest point less the polygon's
/// `ground_col` when given (and `max` is computed), else the highest less the lowest (when
/// both are computed). A polygon without points gets a count of 0 and NULL for the rest. The
/// points are read in the polygons' CRS: reproject them first if theirs differs. As
/// GISPulse's `pointcloud_zonal_height`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PointcloudZonalHeight {
    /// The point cloud (a step or dataset layer of points with Z).
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// The statistics (default `["max", "min", "mean", "count"]`).
    #[serde(default)]
    pub stats: Vec<String>,
    /// Put before each statistic's name (default `z_`).
    #[serde(default = "z_prefix")]
    pub prefix: String,
    /// The polygons' ground elevation field: the height is the highest point less it.
    #[serde(default)]
    pub ground_col: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn z_prefix() -> String {
    "z_".into()
}

/// GISPulse's default statistics of `pointcloud_zonal_height`.
pub const DEFAULT_STATS: [HeightStat; 4] = [
    HeightStat::Max,
    HeightStat::Min,
    HeightStat::Mean,
    HeightStat::Count,
];

impl CapabilityParams for PointcloudZonalHeight {
    const NAME: &'static str = "pointcloud_zonal_height";
    const GROUP: Group = Group::PointCloud;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let stats = HeightStat::parse_list(&self.stats, &DEFAULT_STATS)
            .map_err(|reason| vec![Problem::new(ctx.at("stats"), reason)])?;
        let has = |stat| stats.contains(&stat);
        let height = match &self.ground_col {
            Some(column) if has(HeightStat::Max) => {
                require_columns(ctx.input, std::slice::from_ref(column), ctx.at("ground_col"))?;
                Height::MaxMinusColumn(column.clone())
            }
            _ if has(HeightStat::Max) && has(HeightStat::Min) => Height::MaxMinusMin,
            _ => Height::None,
        };
        let op = ZonalHeightOp {
            stats,
            prefix: self.prefix.clone(),
            height,
        };
        let problems: Vec<Problem> = op
            .outputs()
            .iter()
            .flat_map(|(name, _)| check_new_field(name, ctx, "prefix"))
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::owned(op)])
    }
}
