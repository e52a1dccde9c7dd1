//! What the native backend runs: for each operator, whether a native kernel computes it and
//! which one. Engine assignment decides with [`native_support`]; `sql-preview` prints
//! [`native_kernel`] for the steps that run natively. The backend implements exactly these.

use super::operator::{AggFunc, GeoExpr, JoinHow, Operator, SpatialPredicate, ValueExpr};

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

/// The geometry functions a native map computes.
fn native_geo(expr: &GeoExpr) -> bool {
    !matches!(expr, GeoExpr::Transform { .. })
}

/// `Ok` when the native backend computes `op`; otherwise why not, naming the operator.
/// Data the kernels cannot take (a point kernel given polygons) is only known at run time:
/// such a stage then runs as SQL, and the run says so.
pub fn native_support(op: &Operator) -> Result<(), String> {
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
            Ok(())
        }
        Operator::SpatialJoin(j) => match (j.predicate, j.how) {
            (SpatialPredicate::Dwithin, JoinHow::Inner) if j.distance.is_some() => Ok(()),
            (SpatialPredicate::Intersects | SpatialPredicate::Within, JoinHow::Inner) => Ok(()),
            _ => decline(&format!(
                "with predicate {:?} and how {:?} (native: inner joins by intersects, within or dwithin)",
                j.predicate, j.how
            )),
        },
        Operator::Nearest(_) => Ok(()),
        Operator::Map(map) => {
            let all_native = !map.set.is_empty()
                && map.drop.is_empty()
                && map.rename.is_empty()
                && map
                    .set
                    .iter()
                    .all(|(_, value, _)| matches!(value, ValueExpr::Geo(g) if native_geo(g)));
            if all_native {
                Ok(())
            } else {
                decline(
                    "computing anything but buffer, centroid, simplify, convex hull, area or length",
                )
            }
        }
        Operator::Aggregate(a) if a.union_geometry && a.group_by.is_empty() => {
            if a.aggregates.is_empty() {
                Ok(())
            } else {
                decline("with attribute aggregates")
            }
        }
        Operator::Overlay(o) => match o.mode {
            super::operator::OverlayMode::Clip | super::operator::OverlayMode::Erase => Ok(()),
            super::operator::OverlayMode::Intersection => {
                decline("intersection (native: clip and erase)")
            }
        },
        _ => decline("(relational steps run as SQL)"),
    }
}

/// The kernel that computes `op` natively, in a line (`None` when none does).
pub fn native_kernel(op: &Operator) -> Option<String> {
    native_support(op).ok()?;
    Some(match op {
        Operator::SpatialAggregate(a) => format!(
            "point-in-polygon aggregation ({:?}): an R-tree over the polygon parts, points read straight from WKB in parallel batches, {} aggregate(s) accumulated per polygon",
            a.predicate,
            a.aggregates.len()
        ),
        Operator::SpatialJoin(j) => format!(
            "point-to-polygon join ({:?}{}): an R-tree over the polygon parts, points in parallel batches, matched rows gathered with Arrow take",
            j.predicate,
            j.distance.map(|d| format!(" {d}")).unwrap_or_default()
        ),
        Operator::Nearest(n) => format!(
            "nearest polygon of each point: best-first search of an R-tree by envelope distance, exact distances to the parts{}",
            n.max_distance
                .map(|d| format!(", at most {d} away"))
                .unwrap_or_default()
        ),
        Operator::Map(map) => {
            let kernels: Vec<String> = map
                .set
                .iter()
                .map(|(name, value, _)| match value {
                    ValueExpr::Geo(g) => format!("{name} = {}", geo_kernel(g)),
                    _ => String::new(),
                })
                .collect();
            format!("per-feature geometry, rows in parallel: {}", kernels.join("; "))
        }
        Operator::Aggregate(_) => {
            "dissolve: rows sorted along x, one cascaded GEOS union per core, the partial unions unioned"
                .to_owned()
        }
        Operator::Overlay(o) => format!(
            "{:?}: an R-tree over the second input, each feature cut by the GEOS union of the parts it meets, rows in parallel",
            o.mode
        ),
        _ => return None,
    })
}

fn geo_kernel(expr: &GeoExpr) -> String {
    match expr {
        GeoExpr::Buffer {
            distance,
            geodesic: true,
            ..
        } => format!(
            "geodesic buffer of {distance} m (points: circle vertices by the direct geodesic problem on WGS 84)"
        ),
        GeoExpr::Buffer { distance, .. } => format!("GEOS buffer of {distance}"),
        GeoExpr::Centroid => "centroid (geo)".to_owned(),
        GeoExpr::Simplify {
            tolerance,
            preserve_topology,
        } => format!(
            "GEOS {}simplify, tolerance {tolerance}",
            if *preserve_topology {
                "topology-preserving "
            } else {
                ""
            }
        ),
        GeoExpr::ConvexHull => "convex hull (GEOS)".to_owned(),
        GeoExpr::Area { geodesic: true, .. } => {
            "area on the WGS 84 spheroid (geo, Karney)".to_owned()
        }
        GeoExpr::Area { factor, .. } => format!("planar area × {factor}"),
        GeoExpr::Length { geodesic: true, .. } => {
            "length on the WGS 84 spheroid (geo, Karney)".to_owned()
        }
        GeoExpr::Length { factor, .. } => format!("planar length × {factor}"),
        GeoExpr::Transform { .. } => String::new(),
    }
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
        assert_eq!(native_support(&aggregate(SpatialPredicate::Within)), Ok(()));
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
        assert_eq!(
            native_support(&sort),
            Err("Sort (relational steps run as SQL)".into())
        );
        assert_eq!(native_kernel(&sort), None);
    }
}
