//! The kernel of `Classify`: the breaks and classes of `crate::classify`, over the first input.

use geomill_planner::plan::ops::classify::ClassifyOp;

use crate::NativeError;
use crate::layer::Layer;

pub fn run(op: &ClassifyOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    crate::classify::classify(super::first(op, inputs)?, op)
}
