//! The kernels of the operators that own their parts (the planner's `plan/ops/`), bound by the
//! operator's type in [`kernels!`]: a kernel written for its operator is its file here
//! (`pub fn run(op, inputs)`) and a line under `modules`; a kernel of the crate over the first
//! input (`fn(&Layer, &Op)`) is a line under `first_input`. An operator with no kernel here is
//! declined at run time and runs as its SQL, saying so.

use geomill_planner::plan::ops::{
    classify::ClassifyOp, clean::CleanOp, line_clean::LineCleanOp, numpy_sample::NumpySampleOp,
    pointcloud::GridSummaryOp, pointcloud::ZonalHeightOp, raster::ChangeDetectionOp,
    raster::RasterWriteOp, scale::ScaleOp, statistics::GenerateOp, statistics::StatisticOp,
    tessellate::TessellateOp, zonal_stats::ZonalStatsOp,
};
use geomill_planner::plan::owned::OwnedOperator;

use super::NativeError;
use super::layer::Layer;

/// Declares each kernel module and dispatches an operator of each bound type to its kernel.
macro_rules! kernels {
    (
        modules { $($module:ident => $op:ty),* $(,)? }
        first_input { $($kernel:path => $first_op:ty),* $(,)? }
    ) => {
        $(pub mod $module;)*

        /// Computes `op` over `inputs` with the kernel bound to its type.
        pub fn run(op: &dyn OwnedOperator, inputs: &[&Layer]) -> Result<Layer, NativeError> {
            let any = op.as_any();
            $(if let Some(typed) = any.downcast_ref::<$op>() {
                return $module::run(typed, inputs);
            })*
            $(if let Some(typed) = any.downcast_ref::<$first_op>() {
                return $kernel(first(op, inputs)?, typed);
            })*
            Err(NativeError::Declined(format!(
                "{} has no kernel in the native backend",
                op.name()
            )))
        }
    };
}

kernels! {
    modules {
        change_detection => ChangeDetectionOp,
        generate => GenerateOp,
        grid_summary => GridSummaryOp,
        numpy_sample => NumpySampleOp,
        raster_write => RasterWriteOp,
        zonal_height => ZonalHeightOp,
        zonal_stats => ZonalStatsOp,
    }
    first_input {
        crate::classify::classify => ClassifyOp,
        crate::cleaning::clean => CleanOp,
        crate::line_clean::clean => LineCleanOp,
        crate::scale::scale => ScaleOp,
        crate::statistics::statistic => StatisticOp,
        crate::diagrams::tessellate => TessellateOp,
    }
}

/// The first input, or the error naming the operator that lacks it.
pub fn first<'a>(op: &dyn OwnedOperator, inputs: &[&'a Layer]) -> Result<&'a Layer, NativeError> {
    inputs
        .first()
        .copied()
        .ok_or_else(|| NativeError::Declined(format!("{} without its input", op.name())))
}
