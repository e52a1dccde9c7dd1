//! The kernel of `LineClean`'s network steps (snapping endpoints, merging pseudo nodes,
//! extending dangles, removing near duplicates): `crate::line_clean`.

use geomill_planner::plan::ops::line_clean::LineCleanOp;

use crate::NativeError;
use crate::layer::Layer;

pub fn run(op: &LineCleanOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    crate::line_clean::clean(super::first(op, inputs)?, op)
}
