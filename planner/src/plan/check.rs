//! Plan invariants, checked after lowering and after every optimizer rule.

use std::collections::BTreeSet;

use super::graph::Plan;
use super::schema_infer::output_schema;

impl Plan {
    /// Checks that the plan is acyclic, every node has as many inputs as its operator takes,
    /// relation names are unique, the result exists, and stored schemas match re-inferred ones.
    pub fn check(&self) -> Result<(), String> {
        let order = self.topological().ok_or("the plan has a cycle")?;
        let mut relations = BTreeSet::new();
        for index in order {
            let node = self.node(index).ok_or("a node vanished")?;
            let inputs = self.inputs(index);
            let arity_ok = match node.op.arity() {
                Some(n) => inputs.len() == n,
                None => !inputs.is_empty(),
            };
            if !arity_ok {
                return Err(format!(
                    "{} (step {}) has {} input(s)",
                    node.op.name(),
                    node.step,
                    inputs.len()
                ));
            }
            if !relations.insert(node.relation.clone()) {
                return Err(format!("relation {} is defined twice", node.relation));
            }
            if !inputs.is_empty() && node.schema.is_some() {
                let schemas: Vec<_> = inputs
                    .iter()
                    .map(|i| self.node(*i).and_then(|n| n.schema.as_ref()))
                    .collect();
                if output_schema(&node.op, &schemas) != node.schema {
                    return Err(format!(
                        "the schema of {} (step {}) no longer follows from its inputs",
                        node.op.name(),
                        node.step
                    ));
                }
            }
        }
        match self.result {
            Some(result) if self.node(result).is_some() => Ok(()),
            Some(_) => Err("the result node is gone".into()),
            None => Err("the plan has no result".into()),
        }
    }
}

impl Plan {
    /// Recomputes every node's schema from its inputs (scans keep theirs).
    pub fn infer_schemas(&mut self) {
        let Some(order) = self.topological() else {
            return;
        };
        for index in order {
            let inputs = self.inputs(index);
            if inputs.is_empty() {
                continue;
            }
            let schemas: Vec<Option<crate::schema::Schema>> = inputs
                .iter()
                .map(|i| self.node(*i).and_then(|n| n.schema.clone()))
                .collect();
            let refs: Vec<Option<&crate::schema::Schema>> =
                schemas.iter().map(Option::as_ref).collect();
            if let Some(node) = self.graph.node_weight_mut(index) {
                node.schema = output_schema(&node.op, &refs);
            }
        }
    }
}
