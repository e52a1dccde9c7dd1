//! The kernels of `Generate`: a grid over the input's extent (`crate::tessellation`), a density
//! surface (`crate::density`), the neighbours table of spatial weights (`crate::statistics`).

use geomill_planner::plan::ops::statistics::GenerateOp;

use crate::layer::Layer;
use crate::{NativeError, density, statistics, tessellation};

pub fn run(op: &GenerateOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let main = super::first(op, inputs)?;
    match op {
        GenerateOp::Grid { grid, touching } => tessellation::grid(main, grid, *touching),
        GenerateOp::Density {
            grid,
            kernel,
            bandwidth,
            weight,
            keep_empty,
            normalize,
        } => density::density(
            main,
            grid,
            &density::Estimate {
                kind: *kernel,
                bandwidth: *bandwidth,
                weight: weight.as_deref(),
                keep_empty: *keep_empty,
                normalize: *normalize,
            },
        ),
        GenerateOp::Neighbours { weights, id_field } => {
            statistics::neighbours_table(main, weights, id_field.as_deref())
        }
    }
}
