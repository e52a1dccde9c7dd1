//! Engine assignment: which backend runs each node. Embedded and PostGIS modes run everything
//! on their engine; hybrid mode sends per-feature geometry work the native kernels do well to
//! the native backend and everything else to PostGIS, where the data lives.

use super::{EngineMode, OptimizerRule};
use crate::error::PlanError;
use crate::plan::operator::{GeoExpr, Operator, ValueExpr};
use crate::plan::{EngineKind, Plan};

pub struct AssignEngine {
    pub mode: EngineMode,
}

/// Whether the native backend runs `op`: a map whose every computed column is one of the
/// native geometry kernels.
pub fn native_supports(op: &Operator) -> bool {
    match op {
        Operator::Map(map) => {
            !map.set.is_empty()
                && map.set.iter().all(|(_, value, _)| {
                    matches!(
                        value,
                        ValueExpr::Geo(
                            GeoExpr::Buffer {
                                geodesic: false,
                                ..
                            } | GeoExpr::Centroid
                                | GeoExpr::ConvexHull
                                | GeoExpr::Simplify { .. }
                        )
                    )
                })
        }
        _ => false,
    }
}

impl OptimizerRule for AssignEngine {
    fn name(&self) -> &'static str {
        "assign_engine"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        let mut changed = false;
        for node in plan.graph.node_weights_mut() {
            let engine = match self.mode {
                EngineMode::Embedded => EngineKind::Duckdb,
                EngineMode::Postgis => EngineKind::Postgis,
                EngineMode::Hybrid if native_supports(&node.op) => EngineKind::Native,
                EngineMode::Hybrid => EngineKind::Postgis,
            };
            if node.engine != Some(engine) {
                node.engine = Some(engine);
                changed = true;
            }
        }
        Ok(changed)
    }
}
