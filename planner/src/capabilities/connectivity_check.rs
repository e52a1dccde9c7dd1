//! `connectivity_check`: the connected parts of a line network, and the lines cut off.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::check_new_field;
use super::network_graph::{GraphParams, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::fields;
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
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ConnectivityCheck {
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for ConnectivityCheck {
    const NAME: &'static str = "connectivity_check";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        for field in [fields::COMPONENT, fields::COMPONENT_EDGES, fields::ISOLATED] {
            problems.extend(check_new_field(field, ctx, "cost_field"));
        }
        network_step(self.graph.graph(ctx), problems, NetworkAnalysis::Connectivity)
    }
}
