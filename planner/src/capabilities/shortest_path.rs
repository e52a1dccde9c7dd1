//! `shortest_path`: the least-cost path along a line network between origins and destinations.

use schemars::JsonSchema;
use serde::Deserialize;

use super::network_graph::{GraphParams, RouteEnds, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::{NetworkAnalysis, Operator};

/// The least-cost path along a line network (the step's input) from each origin to each
/// destination: one row per pair, with `origin` and `destination` (their id fields' values),
/// `cost` (the path's total), `edges` (how many line parts it takes) and the path as a
/// MultiLineString of those parts in order, as stored (not reversed where the path runs
/// against them). An unreachable pair gets NULL cost, edges and geometry; a pair on one node
/// gets cost 0, 0 edges and a NULL geometry. Where two paths cost the same, either may be
/// given (their cost is the same on every engine).
///
/// The graph and how points are placed on it are those of `od_matrix`. Runs natively
/// (Dijkstra from each origin, in parallel); on the PostGIS engine with pgRouting
/// (`pgr_dijkstra`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ShortestPath {
    #[serde(flatten)]
    pub ends: RouteEnds,
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for ShortestPath {
    const NAME: &'static str = "shortest_path";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.ends.inputs()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        network_step(
            self.graph.graph(ctx),
            self.ends.problems(ctx),
            NetworkAnalysis::ShortestPath {
                origin_id: self.ends.origin_id.clone(),
                destination_id: self.ends.destination_id.clone(),
            },
        )
    }
}
