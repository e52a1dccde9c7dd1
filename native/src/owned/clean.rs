//! The kernel of `Clean`: polygons cleaned against their neighbours with GEOS
//! (`crate::cleaning`).

use geomill_planner::plan::ops::clean::CleanOp;

use crate::NativeError;
use crate::layer::Layer;

pub fn run(op: &CleanOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    crate::cleaning::clean(super::first(op, inputs)?, op)
}
