//! Stage fusion: a chain of nodes on one engine, each read only by the next, becomes one stage,
//! emitted as one query (CTEs) instead of one table per step.

use std::collections::BTreeMap;

use super::{OptimizerRule, only_consumer};
use crate::error::PlanError;
use crate::plan::Plan;
use crate::plan::operator::Operator;

pub struct FuseStages;

impl OptimizerRule for FuseStages {
    fn name(&self) -> &'static str {
        "fuse_stages"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        let Some(order) = plan.topological() else {
            return Err(PlanError::Optimizer {
                rule: "fuse_stages",
                reason: "the plan has a cycle".into(),
            });
        };
        let mut stages = BTreeMap::new();
        let mut next = 1;
        for index in order {
            let Some(node) = plan.node(index) else {
                continue;
            };
            if matches!(node.op, Operator::Scan { columns: None, .. }) {
                continue;
            }
            // pgRouting reads a network analysis's lines by table name: they are a stage's table.
            let fusable = !matches!(node.op, Operator::Export(_) | Operator::Network(_));
            let joined = plan
                .inputs(index)
                .first()
                .copied()
                .filter(|_| fusable)
                .and_then(|input| {
                    let upstream = plan.node(input)?;
                    let same_engine = upstream.engine == node.engine;
                    let fusable_input = !matches!(
                        upstream.op,
                        Operator::Export(_) | Operator::Scan { columns: None, .. }
                    );
                    (same_engine && fusable_input && only_consumer(plan, input) == Some(index))
                        .then(|| stages.get(&input).copied())
                        .flatten()
                });
            let stage = joined.unwrap_or_else(|| {
                next += 1;
                next - 1
            });
            stages.insert(index, stage);
        }
        // A stage runs after every stage it reads: stages are numbered in the order of their
        // last node (a node may join its first input's stage while its other input, a mask say,
        // is a stage made later in the walk).
        let position: BTreeMap<_, usize> = plan
            .topological()
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(at, index)| (index, at))
            .collect();
        let mut last_at: BTreeMap<usize, usize> = BTreeMap::new();
        for (index, stage) in &stages {
            let at = position.get(index).copied().unwrap_or(0);
            let entry = last_at.entry(*stage).or_insert(at);
            *entry = (*entry).max(at);
        }
        let mut by_position: Vec<(usize, usize)> =
            last_at.into_iter().map(|(stage, at)| (at, stage)).collect();
        by_position.sort_unstable();
        let renumbered: BTreeMap<usize, usize> = by_position
            .into_iter()
            .enumerate()
            .map(|(k, (_, stage))| (stage, k + 1))
            .collect();
        let mut changed = false;
        for (index, stage) in stages {
            let stage = renumbered.get(&stage).copied().unwrap_or(stage);
            if let Some(node) = plan.graph.node_weight_mut(index)
                && node.stage != Some(stage)
            {
                node.stage = Some(stage);
                changed = true;
            }
        }
        Ok(changed)
    }
}
