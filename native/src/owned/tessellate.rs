//! The kernel of `Tessellate`: GEOS's Voronoi, Delaunay and polygonizer over the whole input
//! (`crate::diagrams`).

use geomill_planner::plan::ops::tessellate::TessellateOp;

use crate::NativeError;
use crate::layer::Layer;

pub fn run(op: &TessellateOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    crate::diagrams::tessellate(super::first(op, inputs)?, op)
}
