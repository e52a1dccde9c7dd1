//! `mst`: the lines of a minimum spanning tree (a forest, for a disconnected network).

use schemars::JsonSchema;
use serde::Deserialize;

use super::network_graph::{GraphParams, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::{NetworkAnalysis, Operator};

/// The features of a line network (the step's input) that form a minimum spanning forest of its
/// graph: the least total cost linking every node each connected part links, lines taken
/// whichever way they run (`directed` and `oneway_field` are ignored). Kept features keep their
/// attributes and geometry; a multi-part line is kept when any of its parts is in the forest.
/// Between lines of equal cost the one found first in the input is taken natively (Kruskal's
/// order), pgRouting's choice on PostGIS: the total cost is the same on every engine, the lines
/// taken may differ where costs tie.
/// Runs natively (Kruskal over petgraph's union-find); on the PostGIS engine with pgRouting
/// (`pgr_kruskal`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Mst {
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Mst {
    const NAME: &'static str = "mst";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        network_step(self.graph.graph(ctx), Vec::new(), NetworkAnalysis::SpanningTree)
    }
}
