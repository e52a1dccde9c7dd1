//! The plan as data: operators in a petgraph graph, edges from an input to its consumer
//! weighted by the input's position.

use petgraph::Direction;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::EdgeRef;

use super::operator::Operator;
use crate::capabilities::OnEmpty;
use crate::schema::Schema;

/// Which backend runs a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Duckdb,
    Postgis,
    Native,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Duckdb => "duckdb",
            Self::Postgis => "postgis",
            Self::Native => "native",
        }
    }
}

/// One operator with what the planner knows about it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanNode {
    pub op: Operator,
    /// The spec step this node comes from (empty for the scans of sources).
    pub step: String,
    /// The capability of that step.
    pub capability: Option<&'static str>,
    /// Output schema, when the inputs' schemas are known.
    pub schema: Option<Schema>,
    /// The relation this node's output is called in SQL (unique in the plan).
    pub relation: String,
    /// Set by the engine-assignment rule.
    pub engine: Option<EngineKind>,
    /// Why the engine was chosen (native and hybrid modes, where it varies by node).
    pub engine_reason: Option<String>,
    /// Nodes with the same stage run as one query; set by the fusion rule.
    pub stage: Option<usize>,
    pub on_empty: Option<OnEmpty>,
    /// Names of the inline triggers of the step.
    pub triggers: Vec<String>,
}

impl PlanNode {
    pub fn new(op: Operator, step: &str, relation: String) -> Self {
        Self {
            op,
            step: step.to_owned(),
            capability: None,
            schema: None,
            relation,
            engine: None,
            engine_reason: None,
            stage: None,
            on_empty: None,
            triggers: Vec::new(),
        }
    }
}

/// A logical plan.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub graph: StableDiGraph<PlanNode, usize>,
    /// The node whose output is the pipeline's result (the last step's).
    pub result: Option<NodeIndex>,
}

impl Plan {
    pub fn add(&mut self, node: PlanNode, inputs: &[NodeIndex]) -> NodeIndex {
        let index = self.graph.add_node(node);
        for (position, input) in inputs.iter().enumerate() {
            self.graph.add_edge(*input, index, position);
        }
        index
    }

    pub fn node(&self, index: NodeIndex) -> Option<&PlanNode> {
        self.graph.node_weight(index)
    }

    /// The inputs of `index`, in position order.
    pub fn inputs(&self, index: NodeIndex) -> Vec<NodeIndex> {
        let mut edges: Vec<(usize, NodeIndex)> = self
            .graph
            .edges_directed(index, Direction::Incoming)
            .map(|e| (*e.weight(), e.source()))
            .collect();
        edges.sort_unstable();
        edges.into_iter().map(|(_, source)| source).collect()
    }

    /// The nodes that read `index`.
    pub fn consumers(&self, index: NodeIndex) -> Vec<NodeIndex> {
        let mut nodes: Vec<NodeIndex> = self
            .graph
            .neighbors_directed(index, Direction::Outgoing)
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// Nodes in an order where every input comes before its consumers; `None` on a cycle.
    pub fn topological(&self) -> Option<Vec<NodeIndex>> {
        petgraph::algo::toposort(&self.graph, None).ok()
    }

    /// Nodes nothing reads (the result, exports, and steps whose output is unused), in order.
    pub fn roots(&self) -> Vec<NodeIndex> {
        let mut roots: Vec<NodeIndex> = self
            .graph
            .node_indices()
            .filter(|i| self.consumers(*i).is_empty())
            .collect();
        roots.sort_unstable();
        roots
    }

    /// Moves `upper` below `lower`, where `lower` is `upper`'s only (first) input and `upper`
    /// its only consumer: `x → lower → upper → consumers` becomes `x → upper → lower →
    /// consumers`. Other inputs of `lower` stay with `lower`.
    pub fn swap_down(&mut self, upper: NodeIndex, lower: NodeIndex) {
        let below = self.inputs(lower).first().copied();
        let consumers: Vec<(NodeIndex, usize)> = self
            .graph
            .edges_directed(upper, Direction::Outgoing)
            .map(|e| (e.target(), *e.weight()))
            .collect();
        let edges: Vec<_> = self
            .graph
            .edges_directed(upper, Direction::Outgoing)
            .map(|e| e.id())
            .chain(
                self.graph
                    .edges_directed(upper, Direction::Incoming)
                    .map(|e| e.id()),
            )
            .collect();
        for edge in edges {
            self.graph.remove_edge(edge);
        }
        if let Some(first) = self
            .graph
            .edges_directed(lower, Direction::Incoming)
            .find(|e| *e.weight() == 0)
            .map(|e| e.id())
        {
            self.graph.remove_edge(first);
        }
        if let Some(below) = below {
            self.graph.add_edge(below, upper, 0);
        }
        self.graph.add_edge(upper, lower, 0);
        for (consumer, position) in consumers {
            self.graph.add_edge(lower, consumer, position);
        }
        if self.result == Some(upper) {
            self.result = Some(lower);
        }
    }

    /// Removes a one-input node, connecting its input to its consumers.
    pub fn bypass(&mut self, index: NodeIndex) {
        let input = self.inputs(index).first().copied();
        let consumers: Vec<(NodeIndex, usize)> = self
            .graph
            .edges_directed(index, Direction::Outgoing)
            .map(|e| (e.target(), *e.weight()))
            .collect();
        self.graph.remove_node(index);
        if let Some(input) = input {
            for (consumer, position) in consumers {
                self.graph.add_edge(input, consumer, position);
            }
            if self.result == Some(index) {
                self.result = Some(input);
            }
        }
    }
}
