//! Column pruning: a step that only drops columns moves down past work that does not read
//! them, computations of columns dropped later are removed, and at a scan the drop becomes the
//! scan's column list, so unused columns are never read.

use petgraph::stable_graph::NodeIndex;

use super::{OptimizerRule, only_consumer, transform_down};
use crate::error::PlanError;
use crate::plan::Plan;
use crate::plan::operator::{MapOp, Operator};

pub struct PruneColumns;

fn is_pure_drop(map: &MapOp) -> bool {
    !map.drop.is_empty() && map.set.is_empty() && map.rename.is_empty()
}

/// What to do with the drop `upper` over its input `lower`.
enum Action {
    IntoScan(Vec<String>),
    RemoveComputed(Vec<String>),
    SwapBelow,
}

fn action(plan: &Plan, upper: NodeIndex, lower: NodeIndex, drop: &[String]) -> Option<Action> {
    let node = plan.node(lower)?;
    let reads_dropped = |columns: &[String]| columns.iter().any(|c| drop.contains(c));
    match &node.op {
        Operator::Scan { columns: None, .. }
        | Operator::Scan {
            columns: Some(_), ..
        } => {
            let schema = node.schema.as_ref()?;
            let kept: Vec<String> = schema
                .names()
                .into_iter()
                .filter(|n| !drop.contains(&(*n).to_owned()))
                .map(str::to_owned)
                .collect();
            Some(Action::IntoScan(kept))
        }
        Operator::Map(map) => {
            let computed: Vec<String> = map
                .set
                .iter()
                .map(|(n, _, _)| n.clone())
                .filter(|n| drop.contains(n))
                .collect();
            if !computed.is_empty() {
                return Some(Action::RemoveComputed(computed));
            }
            let renamed = map
                .rename
                .iter()
                .any(|(from, to)| drop.contains(from) || drop.contains(to));
            let reads = map.set.iter().any(|(_, v, _)| reads_dropped(&v.columns()));
            (!renamed && !reads).then_some(Action::SwapBelow)
        }
        Operator::Filter { predicate } => {
            (!reads_dropped(&predicate.columns().into_iter().collect::<Vec<_>>()))
                .then_some(Action::SwapBelow)
        }
        Operator::Sort { keys, .. } => {
            (!keys.iter().any(|k| drop.contains(&k.column))).then_some(Action::SwapBelow)
        }
        Operator::Sample { .. } => Some(Action::SwapBelow),
        _ => {
            let _ = upper;
            None
        }
    }
}

impl OptimizerRule for PruneColumns {
    fn name(&self) -> &'static str {
        "prune_columns"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        transform_down(plan, &mut |plan, index| {
            let Some(Operator::Map(map)) = plan.node(index).map(|n| &n.op) else {
                return Ok(false);
            };
            if !is_pure_drop(map) {
                return Ok(false);
            }
            let drop = map.drop.clone();
            let Some(lower) = plan.inputs(index).first().copied() else {
                return Ok(false);
            };
            if only_consumer(plan, lower) != Some(index) {
                return Ok(false);
            }
            match action(plan, index, lower, &drop) {
                Some(Action::IntoScan(kept)) => {
                    if let Some(Operator::Scan { columns, .. }) =
                        plan.graph.node_weight_mut(lower).map(|n| &mut n.op)
                    {
                        *columns = Some(kept.clone());
                    }
                    if let Some(scan) = plan.graph.node_weight_mut(lower) {
                        if let Operator::Scan { source, .. } = &scan.op {
                            // Its own name: a relation called like the source would shadow it.
                            scan.relation = format!("{source}__columns");
                        }
                        if let Some(schema) = &mut scan.schema {
                            schema.columns.retain(|c| kept.contains(&c.name));
                        }
                    }
                    plan.bypass(index);
                    Ok(true)
                }
                Some(Action::RemoveComputed(computed)) => {
                    if let Some(Operator::Map(lower_map)) =
                        plan.graph.node_weight_mut(lower).map(|n| &mut n.op)
                    {
                        lower_map.set.retain(|(n, _, _)| !computed.contains(n));
                    }
                    if let Some(Operator::Map(upper_map)) =
                        plan.graph.node_weight_mut(index).map(|n| &mut n.op)
                    {
                        upper_map.drop.retain(|n| !computed.contains(n));
                    }
                    for node in [lower, index] {
                        if let Some(Operator::Map(m)) = plan.node(node).map(|n| &n.op)
                            && m.set.is_empty()
                            && m.drop.is_empty()
                            && m.rename.is_empty()
                        {
                            plan.bypass(node);
                        }
                    }
                    Ok(true)
                }
                Some(Action::SwapBelow) => {
                    plan.swap_down(index, lower);
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }
}
