//! The kernels of the operators that own their parts (the planner's `plan/ops/`), bound by the
//! operator's type: a kernel is its file here (`pub fn run(op, inputs)`) and a line in
//! [`kernels!`]. An operator whose binding names a kernel that is not here is declined at run
//! time and runs as its SQL, saying so.

use geomill_planner::plan::owned::OwnedOperator;

use super::NativeError;
use super::layer::Layer;

/// Declares each kernel's module and dispatches an operator of its type to its `run`.
macro_rules! kernels {
    ($($module:ident => $op:ty),* $(,)?) => {
        $(pub mod $module;)*

        /// Computes `op` over `inputs` with the kernel bound to its type.
        pub fn run(op: &dyn OwnedOperator, inputs: &[&Layer]) -> Result<Layer, NativeError> {
            $(if let Some(op) = op.as_any().downcast_ref::<$op>() {
                return $module::run(op, inputs);
            })*
            Err(NativeError::Declined(format!(
                "{} has no kernel in the native backend",
                op.name()
            )))
        }
    };
}

kernels! {
    classify => geomill_planner::plan::ops::classify::ClassifyOp,
    clean => geomill_planner::plan::ops::clean::CleanOp,
    generate => geomill_planner::plan::ops::statistics::GenerateOp,
    line_clean => geomill_planner::plan::ops::line_clean::LineCleanOp,
    scale => geomill_planner::plan::ops::scale::ScaleOp,
    statistic => geomill_planner::plan::ops::statistics::StatisticOp,
    tessellate => geomill_planner::plan::ops::tessellate::TessellateOp,
    numpy_sample => geomill_planner::plan::ops::numpy_sample::NumpySampleOp,
}

/// The first input, or the error naming the operator that lacks it.
pub fn first<'a>(op: &dyn OwnedOperator, inputs: &[&'a Layer]) -> Result<&'a Layer, NativeError> {
    inputs
        .first()
        .copied()
        .ok_or_else(|| NativeError::Declined(format!("{} without its input", op.name())))
}
