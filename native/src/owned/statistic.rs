//! The kernel of `Statistic`: per-feature statistics over spatial weights
//! (`crate::statistics`).

use geomill_planner::plan::ops::statistics::StatisticOp;

use crate::NativeError;
use crate::layer::Layer;

pub fn run(op: &StatisticOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    crate::statistics::statistic(super::first(op, inputs)?, op)
}
