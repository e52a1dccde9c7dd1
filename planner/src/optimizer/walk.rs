//! The walks every node rule shares: each node of the plan visited once, in an order, with the
//! rule's rewrite at it; the schemas re-inferred after each change so the next node sees them.
//! The optimizer repeats a rule's walks until one changes nothing (see [`super::fixpoint`]).

use petgraph::stable_graph::NodeIndex;

use crate::error::PlanError;
use crate::plan::Plan;

/// A rewrite at one node: `true` when it changed the plan.
pub type AtNode<'a> = dyn FnMut(&mut Plan, NodeIndex) -> Result<bool, PlanError> + 'a;

/// Visits the consumers before their inputs (from the results down to the scans).
pub fn transform_down(plan: &mut Plan, rewrite: &mut AtNode<'_>) -> Result<bool, PlanError> {
    let mut order = inputs_first(plan);
    order.reverse();
    transform(plan, order, rewrite)
}

/// Visits the inputs before their consumers (from the scans up to the results).
pub fn transform_up(plan: &mut Plan, rewrite: &mut AtNode<'_>) -> Result<bool, PlanError> {
    let order = inputs_first(plan);
    transform(plan, order, rewrite)
}

/// The nodes, inputs first (node order on a cycle, which the plan check then reports).
fn inputs_first(plan: &Plan) -> Vec<NodeIndex> {
    plan.topological()
        .unwrap_or_else(|| plan.graph.node_indices().collect())
}

fn transform(
    plan: &mut Plan,
    order: Vec<NodeIndex>,
    rewrite: &mut AtNode<'_>,
) -> Result<bool, PlanError> {
    let mut changed = false;
    for index in order {
        // A node an earlier rewrite of this walk removed.
        if plan.node(index).is_none() {
            continue;
        }
        if rewrite(plan, index)? {
            plan.infer_schemas();
            changed = true;
        }
    }
    Ok(changed)
}
