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
            let fusable = !matches!(node.op, Operator::Export(_));
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
        let mut changed = false;
        for (index, stage) in stages {
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
