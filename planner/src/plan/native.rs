//! What the native backend runs: for each operator, whether a kernel computes it, and which
//! ([`NativeKernel`]). Engine assignment decides with [`native_support`]; relational work
//! ([`is_relational`]: filters, attribute fields, sorts, samples) has no kernel and runs on
//! the SQL engine that holds the run's tables, where the native stages leave their results.
//! `sql-preview` prints [`native_kernel`] for the steps that run natively.
//!
//! This is the one declaration of the native backend's reach: the backend's dispatcher
//! (`native/src/dispatch.rs`) matches on [`NativeKernel`] without a wildcard, so a
//! kernel declared here and not implemented there does not compile. It lives with the plan
//! algebra rather than behind a trait the backend implements because plans are made where no
//! backend is linked (`geomill preview`, the planner's own tests).

use super::network::NetworkOp;
use super::operator::{
    AggFunc, GeoExpr, GeometryAgg, JoinHow, NearestOp, Operator, OverlayOp, Owned, PivotOp,
    ReshapeOp, SpatialAggregateOp, SpatialJoinOp, SpatialPredicate, ValueExpr,
};
use super::validate::{ValidateCheck, ValidateOp};
use crate::schema::FieldType;
use crate::sql::Dialect;

/// Whether `op` is relational work: attributes, rows and their order, never geometry. SQL
/// engines run it where the data is (a native stage's result is a table of the run's engine).
pub fn is_relational(op: &Operator) -> bool {
    match op {
        Operator::Filter { .. }
        | Operator::Sort { .. }
        | Operator::Distinct { .. }
        | Operator::Sample { .. } => true,
        Operator::Aggregate(a) => a.geometry.is_none(),
        Operator::Owned(o) => o.is_relational(),
        Operator::Map(map) => map
            .set
            .iter()
            .all(|(_, value, _)| !matches!(value, ValueExpr::Geo(_))),
        _ => false,
    }
}

/// Whether a spatial aggregate's predicate `P(point, polygon)` is one the point-in-polygon
/// kernel decides (boundary rules identical to GEOS's).
fn point_in_polygon_predicate(predicate: SpatialPredicate) -> bool {
    matches!(
        predicate,
        SpatialPredicate::Within
            | SpatialPredicate::Intersects
            | SpatialPredicate::CoveredBy
            | SpatialPredicate::Touches
    )
}

/// The native computation of one operator, with the operator's parameters it needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NativeKernel<'a> {
    /// Points aggregated into the polygons that hold them (an R-tree over the polygon parts).
    PointInPolygonAggregate(&'a SpatialAggregateOp),
    /// Points joined to the polygons they match.
    PointPolygonJoin(&'a SpatialJoinOp),
    /// Each point's nearest polygon.
    NearestPolygon(&'a NearestOp),
    /// Per-feature geometry functions written over the geometry column (or measures into
    /// other columns), in order.
    GeometryMap(&'a [(String, ValueExpr, FieldType)]),
    /// The union of every geometry of the layer.
    Dissolve,
    /// Clip or erase by the second input.
    Overlay(&'a OverlayOp),
    /// An analysis over the graph of a line layer (petgraph, searches in parallel).
    Network(&'a NetworkOp),
    /// Rows to columns, one per value found in the data.
    Pivot(&'a PivotOp),
    /// A validation report in input order with GEOS's predicates.
    Validate(&'a ValidateOp),
    /// The kernel an operator that owns its parts binds by its type (`native/src/owned/`).
    Owned(&'a Owned),
}

/// A pivot whose columns are the values found in the data (no SQL: a query's columns are
/// fixed before it reads the data).
fn found_pivot(op: &Operator) -> Option<&PivotOp> {
    match op {
        Operator::Reshape(ReshapeOp::Pivot(p)) if p.outputs.is_none() => Some(p),
        _ => None,
    }
}

/// Whether only the native backend computes `op` (no SQL engine can): such a node runs
/// natively whatever the engine mode, its data moved out of and back into the engine that
/// holds the run's tables.
pub fn native_only(op: &Operator) -> bool {
    matches!(op, Operator::Owned(o) if o.native_only())
        || matches!(op, Operator::Validate(v) if v.native_only())
        || found_pivot(op).is_some()
}

/// Why the SQL engine of `dialect` cannot compute `op` (a shape its spatial functions do not
/// give as the native kernel does), if it cannot: such a node runs natively on that engine.
pub fn missing_sql(op: &Operator, dialect: Dialect) -> Option<String> {
    match op {
        Operator::Map(map) => map.set.iter().find_map(|(_, value, _)| match value {
            ValueExpr::Geo(GeoExpr::Shape(shape)) => shape.missing_on(dialect),
            _ => None,
        }),
        Operator::Network(n) => n.missing_on(dialect),
        Operator::Owned(o) if !o.native_only() => o.sql_missing(dialect),
        _ => None,
    }
}

/// Why relational work has no kernel.
const RELATIONAL: &str = "(relational: runs on the SQL engine holding the run's tables)";

/// The kernel that computes `op` natively; otherwise why none does, naming the operator.
/// Data the kernels cannot take (a point kernel given polygons) is only known at run time:
/// such a stage then runs as SQL, and the run says so.
pub fn native_support(op: &Operator) -> Result<NativeKernel<'_>, String> {
    let decline = |what: &str| Err(format!("{} {what}", op.name()));
    match op {
        Operator::SpatialAggregate(a) => {
            if !point_in_polygon_predicate(a.predicate) || a.distance.is_some() {
                return decline(&format!(
                    "with predicate {:?} (native: within, intersects, covered_by, touches)",
                    a.predicate
                ));
            }
            if a.aggregates
                .iter()
                .any(|i| i.column.is_none() && i.func != AggFunc::Count)
            {
                return decline("with an aggregate of no column other than count");
            }
            Ok(NativeKernel::PointInPolygonAggregate(a))
        }
        Operator::SpatialJoin(j) => match (j.predicate, j.how) {
            (SpatialPredicate::Dwithin, JoinHow::Inner) if j.distance.is_some() => {
                Ok(NativeKernel::PointPolygonJoin(j))
            }
            (SpatialPredicate::Intersects | SpatialPredicate::Within, JoinHow::Inner) => {
                Ok(NativeKernel::PointPolygonJoin(j))
            }
            _ => decline(&format!(
                "with predicate {:?} and how {:?} (native: inner joins by intersects, within or dwithin)",
                j.predicate, j.how
            )),
        },
        Operator::Reshape(ReshapeOp::Pivot(p)) if p.outputs.is_none() => Ok(NativeKernel::Pivot(p)),
        Operator::Nearest(n) if n.locate.is_some() => {
            decline("locating points along lines (native: the nearest polygon of points)")
        }
        Operator::Nearest(n) if n.reference_transform.is_some() => {
            decline("in a work CRS (native: the layers' own CRS)")
        }
        Operator::Nearest(n) => Ok(NativeKernel::NearestPolygon(n)),
        Operator::Owned(o) => match o.native_kernel() {
            Ok(_) => Ok(NativeKernel::Owned(o)),
            Err(why) => decline(&why),
        },
        Operator::Network(n) => Ok(NativeKernel::Network(n)),
        Operator::Validate(v) if v.native_only() => Ok(NativeKernel::Validate(v)),
        Operator::Map(_) if is_relational(op) => decline(RELATIONAL),
        Operator::Map(map) => {
            let all_native = !map.set.is_empty()
                && map.drop.is_empty()
                && map.rename.is_empty()
                && map
                    .set
                    .iter()
                    .all(|(_, value, _)| matches!(value, ValueExpr::Geo(g) if g.native_kernel().is_some()));
            if all_native {
                Ok(NativeKernel::GeometryMap(&map.set))
            } else {
                decline(
                    "mixing geometry and attribute values, or computing a geometry function without a kernel",
                )
            }
        }
        Operator::Aggregate(a)
            if a.geometry == Some(GeometryAgg::Union) && a.group_by.is_empty() =>
        {
            if a.aggregates.is_empty() {
                Ok(NativeKernel::Dissolve)
            } else {
                decline("with attribute aggregates")
            }
        }
        Operator::Overlay(o) => match o.mode {
            super::operator::OverlayMode::Clip | super::operator::OverlayMode::Erase => {
                Ok(NativeKernel::Overlay(o))
            }
            super::operator::OverlayMode::SymmetricDifference
            | super::operator::OverlayMode::DifferenceWithUnion
            | super::operator::OverlayMode::Union => {
                decline("symmetric difference and union (native: clip and erase)")
            }
            super::operator::OverlayMode::Intersection => {
                decline("intersection (native: clip and erase)")
            }
        },
        op if is_relational(op) => decline(RELATIONAL),
        _ => decline("(no native kernel)"),
    }
}

/// The kernel that computes `op` natively, in a line (`None` when none does).
pub fn native_kernel(op: &Operator) -> Option<String> {
    Some(match native_support(op).ok()? {
        NativeKernel::Owned(o) => o.native_kernel().ok()?,
        NativeKernel::PointInPolygonAggregate(a) => format!(
            "point-in-polygon aggregation ({:?}): an R-tree over the polygon parts, points read straight from WKB in parallel batches, {} aggregate(s) accumulated per polygon",
            a.predicate,
            a.aggregates.len()
        ),
        NativeKernel::PointPolygonJoin(j) => format!(
            "point-to-polygon join ({:?}{}): an R-tree over the polygon parts, points in parallel batches, matched rows gathered with Arrow take",
            j.predicate,
            j.distance.map(|d| format!(" {d}")).unwrap_or_default()
        ),
        NativeKernel::NearestPolygon(n) => format!(
            "nearest polygon of each point: best-first search of an R-tree by envelope distance, exact distances to the parts{}",
            n.max_distance
                .map(|d| format!(", at most {d} away"))
                .unwrap_or_default()
        ),
        NativeKernel::GeometryMap(set) => {
            let kernels: Vec<String> = set
                .iter()
                .map(|(name, value, _)| match value {
                    ValueExpr::Geo(g) => {
                        format!("{name} = {}", g.native_kernel().unwrap_or_default())
                    }
                    _ => String::new(),
                })
                .collect();
            format!(
                "per-feature geometry, rows in parallel: {}",
                kernels.join("; ")
            )
        }
        NativeKernel::Dissolve => {
            "dissolve: one overlay sweep over every polygon edge (shared edges cancel)".to_owned()
        }
        NativeKernel::Overlay(o) => format!(
            "{:?}: an R-tree over the second input, each feature cut by the GEOS union of the parts it meets, rows in parallel",
            o.mode
        ),
        NativeKernel::Network(n) => format!(
            "{}: a petgraph graph of the lines' end points, Dijkstra from each source in parallel",
            n.describe()
        ),
        NativeKernel::Validate(v) => format!(
            "{}: {}",
            v.describe(),
            match &v.check {
                ValidateCheck::Duplicates { tolerance, .. } if *tolerance > 0.0 =>
                    "rows in order, each unclaimed row claiming the later unclaimed rows within the tolerance (GEOS distance) found through an R-tree",
                ValidateCheck::Duplicates { .. } =>
                    "rows in order, each geometry's well-known text (16 decimals, trimmed) looked up among the earlier ones in a hash map",
                _ =>
                    "rows in order through GEOS's isValid and isSimple, then the polygons' pairs whose boxes meet (an R-tree) tested by GEOS's overlaps",
            }
        ),
        NativeKernel::Pivot(p) => format!(
            "pivot: the rows grouped by [{}] in a sorted map, each value of {} found a column (sorted), {} of {} per cell",
            p.index.join(", "),
            p.columns,
            p.func.as_str(),
            p.values
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::operator::{AggItem, SortKey, SpatialAggregateOp};

    fn aggregate(predicate: SpatialPredicate) -> Operator {
        Operator::SpatialAggregate(SpatialAggregateOp {
            predicate,
            distance: None,
            aggregates: vec![AggItem {
                output: "n".into(),
                func: AggFunc::Count,
                column: None,
            }],
        })
    }

    #[test]
    fn a_declined_node_says_what_it_lacks() {
        let within = aggregate(SpatialPredicate::Within);
        assert!(matches!(
            native_support(&within),
            Ok(NativeKernel::PointInPolygonAggregate(_))
        ));
        assert!(native_kernel(&aggregate(SpatialPredicate::Within)).is_some());
        let declined = native_support(&aggregate(SpatialPredicate::Contains)).unwrap_err();
        assert!(
            declined.contains("SpatialAggregate with predicate Contains"),
            "{declined}"
        );
        let sort = Operator::Sort {
            keys: vec![SortKey {
                column: "id".into(),
                descending: false,
            }],
            limit: None,
        };
        assert!(is_relational(&sort));
        let declined = native_support(&sort).unwrap_err();
        assert!(declined.contains("relational"), "{declined}");
        assert!(native_kernel(&sort).is_none());
        let concat = Operator::Concat;
        assert_eq!(
            native_support(&concat),
            Err("Concat (no native kernel)".into())
        );
    }
}
