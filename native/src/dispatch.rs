//! One plan node computed by its native kernel: the operator's inputs as layers in, its output
//! as a layer out. The kernels are the ones the planner declares ([`NativeKernel`]), matched
//! here one by one; data a kernel cannot take (lines where points are expected, say) is declined with
//! [`NativeError::Declined`] before any work, so the caller can run the node's SQL instead.

use geomill_planner::plan::native::{NativeKernel, native_support};
use geomill_planner::plan::operator::{Operator, ValueExpr};

use super::layer::{Layer, Wkb};
use super::stage::NativeNode;
use super::{
    NativeError, aggregate, dissolve, geometry_ops, joins, network, overlay, owned, pivot,
    validation, wkb,
};

/// The WKB type codes a kernel's input may hold.
pub const POINTS: &[u32] = &[1];
pub const POLYGONS: &[u32] = &[3, 6];

/// Declines `layer` unless each of its geometries is NULL or of one of the `allowed` types.
pub fn require(layer: &Layer, allowed: &[u32], role: &str, what: &str) -> Result<(), NativeError> {
    let geom = layer.geometry_index()?;
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            let Some(bytes) = wkbs.get(i) else { continue };
            let code = wkb::geometry_type(bytes).map_err(|e| NativeError::Geometry {
                row: i,
                reason: e.to_string(),
            })?;
            if !allowed.contains(&code) {
                return Err(NativeError::Declined(format!(
                    "the kernel takes {what} as its {role} input, which holds WKB type {code}"
                )));
            }
        }
    }
    Ok(())
}

fn input<'a>(inputs: &[&'a Layer], index: usize, op: &Operator) -> Result<&'a Layer, NativeError> {
    inputs
        .get(index)
        .copied()
        .ok_or_else(|| NativeError::Declined(format!("{} without input {}", op.name(), index + 1)))
}

/// Computes `node` over `inputs` (its inputs' layers, in order), by the kernel the planner
/// declares for it (one arm per [`NativeKernel`], no wildcard).
pub fn run_node(node: &NativeNode, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let op = &node.op;
    let kernel = native_support(op).map_err(NativeError::Declined)?;
    let main = || input(inputs, 0, op);
    match kernel {
        NativeKernel::PointInPolygonAggregate(a) => {
            let others = input(inputs, 1, op)?;
            let main = main()?;
            require(main, POLYGONS, "first", "polygons")?;
            require(others, POINTS, "second", "points")?;
            aggregate::spatial_aggregate(main, others, a.predicate, &a.aggregates)
        }
        NativeKernel::PointPolygonJoin(j) => {
            let (main, polygons) = (main()?, input(inputs, 1, op)?);
            require(main, POINTS, "first", "points")?;
            require(polygons, POLYGONS, "second", "polygons")?;
            joins::points_polygons_join(main, polygons, j.predicate, j.distance, &j.columns)
        }
        NativeKernel::NearestPolygon(n) => {
            let (main, polygons) = (main()?, input(inputs, 1, op)?);
            require(main, POINTS, "first", "points")?;
            require(polygons, POLYGONS, "second", "polygons")?;
            joins::nearest(
                main,
                polygons,
                1,
                n.max_distance,
                &n.distance_field,
                &n.columns,
            )
        }
        NativeKernel::Dissolve => dissolve::dissolve(main()?),
        NativeKernel::Overlay(o) => overlay::overlay(main()?, input(inputs, 1, op)?, o.mode),
        NativeKernel::GeometryMap(set) => {
            let mut layer = main()?.clone();
            for (name, value, _) in set {
                let ValueExpr::Geo(expr) = value else {
                    return Err(NativeError::Declined(format!("computing {name}")));
                };
                layer = geometry_ops::map_one(&layer, name, expr)?;
            }
            Ok(layer)
        }
        NativeKernel::Owned(o) => owned::run(&**o, inputs),
        NativeKernel::Network(n) => network::analyse(n, inputs),
        NativeKernel::Pivot(p) => pivot::pivot(main()?, p),
        NativeKernel::Validate(v) => validation::validate(main()?, v),
    }
}
