//! Bbox pre-filtering: a bbox filter above a planar buffer cannot move below it, but it implies
//! a cheaper one that can — if `buffer(g, r)` meets box B, then `g` meets B grown by r — so the
//! rule adds that filter below the buffer and keeps the exact one above. Only where the filter
//! is the buffer's one reader: another reader of the buffer wants every row.

use super::{OptimizerRule, only_consumer, transform_down};
use crate::error::PlanError;
use crate::expr::SqlExpr;
use crate::plan::operator::{GeoExpr, Operator, ValueExpr};
use crate::plan::{Plan, PlanNode};
use crate::schema::GEOM;

pub struct BboxPrefilter;

/// The planar buffer distance a map applies to `geom`, if it does.
fn buffer_distance(op: &Operator) -> Option<f64> {
    let Operator::Map(map) = op else { return None };
    map.set.iter().find_map(|(name, value, _)| match value {
        ValueExpr::Geo(GeoExpr::Buffer {
            distance,
            geodesic: false,
            ..
        }) if name == GEOM && *distance >= 0.0 => Some(*distance),
        _ => None,
    })
}

impl OptimizerRule for BboxPrefilter {
    fn name(&self) -> &'static str {
        "bbox_prefilter"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        transform_down(plan, &mut |plan, index| {
            let Some(node) = plan.node(index) else {
                return Ok(false);
            };
            let Operator::Filter { predicate } = &node.op else {
                return Ok(false);
            };
            let Some([x1, y1, x2, y2]) = predicate.as_bbox_filter() else {
                return Ok(false);
            };
            let Some(map) = plan.inputs(index).first().copied() else {
                return Ok(false);
            };
            let Some(distance) = plan.node(map).and_then(|m| buffer_distance(&m.op)) else {
                return Ok(false);
            };
            if only_consumer(plan, map) != Some(index) {
                return Ok(false);
            }
            let Some(below) = plan.inputs(map).first().copied() else {
                return Ok(false);
            };
            let grown =
                SqlExpr::bbox_filter([x1 - distance, y1 - distance, x2 + distance, y2 + distance])
                    .map_err(|reason| PlanError::Optimizer {
                        rule: "bbox_prefilter",
                        reason,
                    })?;
            let already = plan.node(below).is_some_and(|b| {
                b.op == Operator::Filter {
                    predicate: grown.clone(),
                }
            });
            if already {
                return Ok(false);
            }
            let mut prefilter = PlanNode::new(
                Operator::Filter { predicate: grown },
                &node.step,
                format!("{}__bbox", node.relation),
            );
            prefilter.schema = plan.node(below).and_then(|b| b.schema.clone());
            let edge = plan.graph.find_edge(below, map);
            if let Some(edge) = edge {
                plan.graph.remove_edge(edge);
            }
            let inserted = plan.add(prefilter, &[below]);
            plan.graph.add_edge(inserted, map, 0);
            Ok(true)
        })
    }
}
