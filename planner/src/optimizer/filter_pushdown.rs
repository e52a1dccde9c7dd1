//! Filter pushdown: a filter moves below the work it does not depend on (computed columns it
//! does not read, sorts, the right side of joins), so that fewer rows reach geometry work.

use std::collections::BTreeSet;

use petgraph::stable_graph::NodeIndex;

use super::{OptimizerRule, only_consumer, transform_down};
use crate::error::PlanError;
use crate::plan::Plan;
use crate::plan::operator::{Operator, OverlayMode};
use crate::schema::GEOM;

pub struct FilterPushdown;

/// Whether a filter reading `columns` gives the same rows above and below `lower`.
fn commutes(plan: &Plan, lower: NodeIndex, columns: &BTreeSet<String>) -> bool {
    let Some(node) = plan.node(lower) else {
        return false;
    };
    let main_schema = plan
        .inputs(lower)
        .first()
        .and_then(|i| plan.node(*i))
        .and_then(|n| n.schema.as_ref());
    // Columns that come unchanged from the main input, by name.
    let from_main = |allow_geom: bool| {
        main_schema.is_some_and(|schema| {
            columns
                .iter()
                .all(|c| schema.has(c) && (allow_geom || c != GEOM))
        })
    };
    match &node.op {
        // Filtering commutes with ordering, not with keeping the first n.
        Operator::Sort { limit, .. } => limit.is_none(),
        Operator::Map(map) => {
            let touched: BTreeSet<&String> = map
                .set
                .iter()
                .map(|(name, _, _)| name)
                .chain(map.drop.iter())
                .chain(map.rename.iter().flat_map(|(from, to)| [from, to]))
                .collect();
            columns.iter().all(|c| !touched.contains(c))
        }
        Operator::SpatialJoin(_)
        | Operator::SpatialAggregate(_)
        | Operator::SpatialFilter(_)
        | Operator::Nearest(_) => {
            let added: BTreeSet<String> = node.schema.as_ref().map_or_else(BTreeSet::new, |out| {
                out.names()
                    .into_iter()
                    .filter(|n| !main_schema.is_some_and(|s| s.has(n)))
                    .map(str::to_owned)
                    .collect()
            });
            from_main(true) && columns.iter().all(|c| !added.contains(c))
        }
        Operator::Overlay(overlay) => match overlay.mode {
            OverlayMode::Clip
            | OverlayMode::Erase
            | OverlayMode::Intersection
            | OverlayMode::DifferenceWithUnion => from_main(false),
            // The second input's rows carry no first-input attributes to filter.
            OverlayMode::SymmetricDifference | OverlayMode::Union => false,
        },
        _ => false,
    }
}

impl OptimizerRule for FilterPushdown {
    fn name(&self) -> &'static str {
        "filter_pushdown"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        transform_down(plan, &mut |plan, index| {
            let Some(Operator::Filter { predicate }) = plan.node(index).map(|n| &n.op) else {
                return Ok(false);
            };
            let columns = predicate.columns();
            let Some(lower) = plan.inputs(index).first().copied() else {
                return Ok(false);
            };
            let moves =
                only_consumer(plan, lower) == Some(index) && commutes(plan, lower, &columns);
            if moves {
                plan.swap_down(index, lower);
            }
            Ok(moves)
        })
    }
}
