//! Engine assignment: which backend runs each node, and why (printed in the plan text).
//! A node only the native backend computes (class breaks, say) runs natively in every mode,
//! and a shape the mode's SQL engine has no function for runs natively in that mode.
//! Otherwise PostGIS mode runs everything on its engine, and embedded mode too but for a
//! dissolve of the whole layer, which goes native (an overlay sweep on every core where
//! DuckDB's `ST_Union_Agg` is one GEOS union on one core, 21 s against about 1.5 s on the
//! benchmark's regions), and an aggregate of points per polygon (see
//! `EMBEDDED_POINTS_IN_POLYGONS`), and a grid summary of points (`EMBEDDED_POINT_GRID`). Native mode runs every node the
//! native backend computes (geometry kernels, DataFusion for relational steps) natively and the
//! rest on DuckDB, in process. Hybrid mode keeps the data in PostGIS and follows one cost rule:
//! - scans, filters, attribute work and everything without a kernel stay in PostGIS, next to
//!   the data, where moving rows out would cost more than the work;
//! - spatial joins, spatial aggregates and nearest-neighbour searches go native: their cost is
//!   per pair of features, and the parallel R-tree kernels beat PostGIS's one-core index
//!   probes by the most (`benches/engines.rs`);
//! - per-feature geometry (buffer, simplify, hull, ...), dissolve, clip and erase go native:
//!   GEOS on every core instead of one statement on one core.

use super::{EngineMode, OptimizerRule, transform_down};
use crate::error::PlanError;
use crate::plan::native::{NativeKernel, is_relational, missing_sql, native_only, native_support};
use crate::plan::operator::{GeoExpr, Operator, ValueExpr};
use crate::plan::ops::pointcloud::GridSummaryOp;
use crate::plan::{EngineKind, Plan};
use crate::sql::Dialect;

pub struct AssignEngine {
    pub mode: EngineMode,
}

/// Why embedded mode dissolves natively: the one node whose kernel is an order of magnitude
/// ahead of DuckDB on one layer (`benches/real_layers.rs`), with the data in the same process.
const EMBEDDED_DISSOLVE: &str = "dissolve: the native overlay sweep on every core (DuckDB's ST_Union_Agg is one GEOS union on one core)";

/// Why embedded mode aggregates points per polygon natively: DuckDB tests each point against
/// each candidate polygon's whole ring, where the native kernel walks only the ring's edges near
/// the point (6.4 s against 1.3 s as a whole `geomill run` of 1M points in 3,209 real-shaped
/// regions, `benches/whole_run.py`). Features that are not points fall back to DuckDB at run time.
const EMBEDDED_POINTS_IN_POLYGONS: &str = "points per polygon: the native kernel walks only the ring edges near each point, on every core (not points: DuckDB at run time)";

/// Why embedded mode summarises points on a grid natively: a point-cloud file is then read by
/// the native reader as it streams (only the coordinates and the class decompressed, the points
/// of other classes skipped as they come), never loaded into a table first; from a table, the
/// kernel finds the cells on every core (`benches/pointcloud.py`).
const EMBEDDED_POINT_GRID: &str = "grid of points: a point-cloud file streamed by the native reader (coordinates and class only), never loaded as a table";

/// Why the validity repair (`on_invalid: fix`) of an embedded run goes native when what reads
/// it does (a dissolve): it runs in the same native stage, with no data moved in between, on
/// every core where DuckDB runs it on one.
const EMBEDDED_FEEDS_NATIVE: &str =
    "make_valid read by a native step: computed in its stage, on every core";

/// Whether the node is `on_invalid: fix`'s repair (a map of the geometry by make_valid only).
fn repairs_validity(op: &Operator) -> bool {
    matches!(op, Operator::Map(map) if !map.set.is_empty()
        && map.set.iter().all(|(_, value, _)| matches!(value, ValueExpr::Geo(GeoExpr::MakeValid))))
}

/// Why a node the native backend computes goes native in hybrid mode.
fn hybrid_native_reason(op: &Operator) -> &'static str {
    match op {
        Operator::SpatialJoin(_) | Operator::SpatialAggregate(_) | Operator::Nearest(_) => {
            "join/KNN cost is per pair: parallel R-tree kernel"
        }
        _ => "per-feature geometry: GEOS on every core",
    }
}

/// The engine of one node in `mode`, and why.
fn assign(mode: EngineMode, op: &Operator) -> (EngineKind, Option<String>) {
    let scan = matches!(op, Operator::Scan { .. });
    if native_only(op) {
        return (
            EngineKind::Native,
            Some("only the native backend computes it".into()),
        );
    }
    let dialect = match mode {
        EngineMode::Embedded | EngineMode::Native | EngineMode::Distributed => Dialect::Duckdb,
        EngineMode::Postgis | EngineMode::Hybrid => Dialect::Postgis,
    };
    if let Some(missing) = missing_sql(op, dialect) {
        return (EngineKind::Native, Some(missing));
    }
    match mode {
        EngineMode::Embedded => match native_support(op) {
            Ok(NativeKernel::Dissolve) => (EngineKind::Native, Some(EMBEDDED_DISSOLVE.into())),
            Ok(NativeKernel::PointInPolygonAggregate(_)) => {
                (EngineKind::Native, Some(EMBEDDED_POINTS_IN_POLYGONS.into()))
            }
            Ok(NativeKernel::Owned(owned)) if owned.downcast::<GridSummaryOp>().is_some() => {
                (EngineKind::Native, Some(EMBEDDED_POINT_GRID.into()))
            }
            _ => (EngineKind::Duckdb, None),
        },
        EngineMode::Postgis => (EngineKind::Postgis, None),
        EngineMode::Native | EngineMode::Distributed if scan => {
            (EngineKind::Duckdb, Some("read from the store".into()))
        }
        EngineMode::Distributed => match native_support(op) {
            Ok(NativeKernel::PointInPolygonAggregate(_)) => (
                EngineKind::Native,
                Some("on the cluster: the points in parts over its executors".into()),
            ),
            Ok(_) => (
                EngineKind::Native,
                Some("native kernel on the server (no partitioned form yet)".into()),
            ),
            Err(declined) => (EngineKind::Duckdb, Some(declined)),
        },
        EngineMode::Native => match native_support(op) {
            Ok(_) => (EngineKind::Native, Some("native kernel".into())),
            Err(declined) => (EngineKind::Duckdb, Some(declined)),
        },
        EngineMode::Hybrid if scan => (EngineKind::Postgis, Some("data lives in PostGIS".into())),
        EngineMode::Hybrid if is_relational(op) => (
            EngineKind::Postgis,
            Some("attribute work stays next to the data".into()),
        ),
        EngineMode::Hybrid => match native_support(op) {
            Ok(_) => (EngineKind::Native, Some(hybrid_native_reason(op).into())),
            Err(declined) => (
                EngineKind::Postgis,
                Some(format!("stays next to the data: {declined}")),
            ),
        },
    }
}

impl OptimizerRule for AssignEngine {
    fn name(&self) -> &'static str {
        "assign_engine"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        // Consumers first: a per-feature geometry step of an embedded run sees whether what
        // reads it runs natively.
        transform_down(plan, &mut |plan, index| {
            let consumers = plan.consumers(index);
            let feeds_native = !consumers.is_empty()
                && consumers.iter().all(|&c| {
                    plan.node(c)
                        .is_some_and(|n| n.engine == Some(EngineKind::Native))
                });
            let Some(node) = plan.graph.node_weight_mut(index) else {
                return Ok(false);
            };
            let (engine, why) = match assign(self.mode, &node.op) {
                (EngineKind::Duckdb, _)
                    if self.mode == EngineMode::Embedded
                        && feeds_native
                        && repairs_validity(&node.op) =>
                {
                    (EngineKind::Native, Some(EMBEDDED_FEEDS_NATIVE.into()))
                }
                assigned => assigned,
            };
            let changed = node.engine != Some(engine) || node.engine_reason != why;
            if changed {
                node.engine = Some(engine);
                node.engine_reason = why;
            }
            Ok(changed)
        })
    }
}
