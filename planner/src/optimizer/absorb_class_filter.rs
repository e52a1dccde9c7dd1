//! Class filters folded into the grid summary that reads them: `pointcloud_filter_classification`
//! then `pointcloud_grid_summary` becomes one grid summary of the points that pass, so the
//! native reader of a point-cloud file decompresses the class with the coordinates and skips the
//! other points as they come, never holding the cloud. Only where the grid is the filter's one
//! reader (another reader wants the filtered rows themselves).

use super::{OptimizerRule, only_consumer, transform_down};
use crate::error::PlanError;
use crate::plan::Plan;
use crate::plan::operator::Operator;
use crate::plan::ops::pointcloud::{ClassFilter, GridSummaryOp};

pub struct AbsorbClassFilter;

impl OptimizerRule for AbsorbClassFilter {
    fn name(&self) -> &'static str {
        "absorb_class_filter"
    }

    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError> {
        transform_down(plan, &mut |plan, index| {
            let Some(grid) = plan.node(index).and_then(|n| match &n.op {
                Operator::Owned(owned) => owned.downcast::<GridSummaryOp>().cloned(),
                _ => None,
            }) else {
                return Ok(false);
            };
            if grid.classes.is_some() {
                return Ok(false);
            }
            let Some(filter) = plan.inputs(index).first().copied() else {
                return Ok(false);
            };
            let Some(classes) = plan.node(filter).and_then(|n| match &n.op {
                Operator::Filter { predicate } => ClassFilter::of(predicate),
                _ => None,
            }) else {
                return Ok(false);
            };
            if only_consumer(plan, filter) != Some(index) {
                return Ok(false);
            }
            if let Some(node) = plan.graph.node_weight_mut(index) {
                node.op = Operator::owned(GridSummaryOp {
                    classes: Some(classes),
                    ..grid
                });
            }
            plan.bypass(filter);
            Ok(true)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::{compile, generic_catalog};
    use crate::optimizer::EngineMode;
    use crate::spec::Vars;

    fn optimized(steps: &str) -> String {
        let document: serde_json::Value =
            serde_json::from_str(&format!(r#"{{"name": "p", "steps": {steps}}}"#)).unwrap();
        let catalog = generic_catalog(&document, &Vars::default()).unwrap();
        let planned = compile(&document, &catalog, &Vars::default(), EngineMode::Embedded).unwrap();
        planned[0].optimized.explain()
    }

    #[test]
    fn a_class_filter_read_only_by_a_grid_is_folded_into_it() {
        let plan = optimized(
            r#"[{"id": "ground", "capability": "pointcloud_filter_classification", "params": {"drop": [7, 18]}},
                {"id": "cells", "capability": "pointcloud_grid_summary", "params": {"cell_size": 2}}]"#,
        );
        assert!(!plan.contains("Filter"), "{plan}");
        assert!(plan.contains("of the points where"), "{plan}");
        assert!(
            plan.contains("NOT (\"classification\" IN (7, 18))"),
            "{plan}"
        );
    }

    #[test]
    fn a_filter_another_step_reads_stays() {
        let plan = optimized(
            r#"[{"id": "ground", "capability": "pointcloud_filter_classification", "params": {"keep": [2]}},
                {"id": "cells", "capability": "pointcloud_grid_summary", "params": {"cell_size": 2}},
                {"id": "again", "capability": "pointcloud_grid_summary", "input": "ground", "params": {"cell_size": 4}}]"#,
        );
        assert!(plan.contains("Filter"), "{plan}");
    }
}
