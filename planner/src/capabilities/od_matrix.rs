//! `od_matrix`: the least cost along a line network from each origin to each destination.

use schemars::JsonSchema;
use serde::Deserialize;

use super::network_graph::{GraphParams, RouteEnds, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::{NetworkAnalysis, Operator};

/// The origin–destination cost matrix over a line network (the step's input): one row per
/// origin and destination, with `origin` and `destination` (their id fields' values), `cost`
/// (the least total cost along the lines, NULL when no path leads there; 0 when both lie on
/// one node) and a straight line from the origin to the destination as geometry (NULL when
/// either is NULL or empty).
///
/// The graph: each part of each line is an edge between its first and last vertex, and lines
/// meet where their end points are equal (node them first with `network_node_lines`, and close
/// small gaps with `network_snap_endpoints`). Each origin and destination starts at the network
/// node (a line end) nearest to it, by planar distance in the CRS's units, ties to the node with
/// the lower coordinates. Runs natively (Dijkstra from each origin, in parallel); on the PostGIS
/// engine with pgRouting (`pgr_dijkstraCost`), whose costs equal the native ones.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OdMatrix {
    #[serde(flatten)]
    pub ends: RouteEnds,
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for OdMatrix {
    const NAME: &'static str = "od_matrix";
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
            NetworkAnalysis::OdMatrix {
                origin_id: self.ends.origin_id.clone(),
                destination_id: self.ends.destination_id.clone(),
            },
        )
    }
}
