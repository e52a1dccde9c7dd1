//! The kernel of `Scale`: a per-row value from a field's values over the whole layer
//! (`crate::scale`).

use geomill_planner::plan::ops::scale::ScaleOp;

use crate::NativeError;
use crate::layer::Layer;

pub fn run(op: &ScaleOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    crate::scale::scale(super::first(op, inputs)?, op)
}
