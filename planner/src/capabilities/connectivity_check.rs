//! `connectivity_check`: the connected parts of a line network, and the lines cut off.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::check_new_field;
use super::network_graph::{GraphParams, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphConnectivity, GraphSpec, NetworkOp, fields};
use crate::plan::operator::{NetworkAnalysis, Operator};

/// Each feature of a line network (the step's input) given its connected part: `component`
/// (1 for the part with the most line parts, then by size; equal sizes by their lowest node,
/// nodes numbered by their coordinates), `component_edges` (how many line parts it holds) and
/// `isolated` (true outside component 1). Lines are linked where their end points are equal,
/// whatever way they run (weakly connected parts). Every feature is kept with its attributes and
/// geometry; a NULL or empty geometry, or a line left out of the graph (NULL or negative cost),
/// gets NULL values. A multi-part line whose parts lie in several components takes the lowest.
/// Runs natively (petgraph's union-find); on the PostGIS engine with pgRouting
/// (`pgr_connectedComponents`).
///
/// With `output: summary` or `components` (GISPulse's answers), the graph is the one GISPulse
/// builds as a networkx `Graph` (each line part an undirected edge between its ends, ends equal
/// at 6 decimals one node, between two nodes only the last part listed, a part left out when
/// its `cost_field` value is NULL or negative) and the answer a table: `summary` one row
/// (`is_connected`, `n_components`, `n_nodes`, `n_edges` the node pairs linked,
/// `largest_component` the most edges in one part, the convex hull of every edge's line),
/// `components` a row per connected part, most nodes first (`component_id` from 0, `n_nodes`,
/// `n_edges`, `is_largest`, the convex hull of its edges' lines). Runs natively on every engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ConnectivityCheck {
    /// `features` (default: each feature with its part), `summary` or `components`.
    #[serde(default)]
    pub output: ConnectivityOutput,
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// What `connectivity_check` answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectivityOutput {
    /// Each feature with its connected part.
    #[default]
    Features,
    /// One row of the network's statistics.
    Summary,
    /// A row per connected part.
    Components,
}

impl CapabilityParams for ConnectivityCheck {
    const NAME: &'static str = "connectivity_check";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.output != ConnectivityOutput::Features {
            return self.report(ctx);
        }
        let mut problems = Vec::new();
        for field in [fields::COMPONENT, fields::COMPONENT_EDGES, fields::ISOLATED] {
            problems.extend(check_new_field(field, ctx, "cost_field"));
        }
        network_step(self.graph.graph(ctx), problems, NetworkAnalysis::Connectivity)
    }
}

impl ConnectivityCheck {
    /// `output: summary` or `components`: a table over GISPulse's graph.
    fn report(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let problems =
            self.graph
                .simple_graph_problems(ctx, "output", "summary and components read");
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Network(NetworkOp {
            graph: GraphSpec::end_points(),
            analysis: NetworkAnalysis::GraphConnectivity(GraphConnectivity {
                weight: self.graph.cost_field.clone(),
                per_component: self.output == ConnectivityOutput::Components,
            }),
        })])
    }
}
