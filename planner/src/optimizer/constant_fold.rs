//! Constant folding: simplify filter and computed-column expressions; drop filters that are
//! always true.

use super::{OptimizerRule, transform_up};
use crate::error::PlanError;
use crate::plan::Plan;
use crate::plan::operator::{Operator, ValueExpr};

pub struct ConstantFold;

impl OptimizerRule for ConstantFold {
    fn name(&self) -> &'static str {
        "constant_fold"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        transform_up(plan, &mut |plan, index| {
            let Some(node) = plan.graph.node_weight_mut(index) else {
                return Ok(false);
            };
            let mut changed = false;
            match &mut node.op {
                Operator::Filter { predicate } => {
                    let folded = predicate.folded();
                    if folded.as_bool() == Some(true) {
                        plan.bypass(index);
                        return Ok(true);
                    }
                    if folded != *predicate {
                        *predicate = folded;
                        changed = true;
                    }
                }
                Operator::Map(map) => {
                    for (_, value, _) in &mut map.set {
                        if let ValueExpr::Sql(expr) = value {
                            let folded = expr.folded();
                            if folded != *expr {
                                *expr = folded;
                                changed = true;
                            }
                        }
                    }
                }
                _ => {}
            }
            Ok(changed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::SqlExpr;
    use crate::plan::PlanNode;

    #[test]
    fn true_filters_vanish_and_others_fold() {
        let mut plan = Plan::default();
        let scan = plan.add(
            PlanNode::new(
                Operator::Scan {
                    source: "s".into(),
                    columns: None,
                },
                "",
                "s".into(),
            ),
            &[],
        );
        let yes = Operator::Filter {
            predicate: SqlExpr::parse("1 < 2").unwrap(),
        };
        let f1 = plan.add(PlanNode::new(yes, "a", "a".into()), &[scan]);
        let some = Operator::Filter {
            predicate: SqlExpr::parse("x > 2 + 3").unwrap(),
        };
        let f2 = plan.add(PlanNode::new(some, "b", "b".into()), &[f1]);
        plan.result = Some(f2);
        assert!(ConstantFold.rewrite(&mut plan).unwrap());
        assert_eq!(plan.inputs(f2), vec![scan]);
        assert!(
            plan.explain().contains("Filter \"x\" > 5"),
            "{}",
            plan.explain()
        );
        assert!(!ConstantFold.rewrite(&mut plan).unwrap());
    }
}
