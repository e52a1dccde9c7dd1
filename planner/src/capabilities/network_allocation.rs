//! `network_allocation`: each line of a network given its nearest facility along the network.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::check_new_field;
use super::network_graph::{GraphParams, check_points, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::fields;
use crate::plan::operator::{NetworkAnalysis, Operator};

/// Each feature of a line network (the step's input) given the facility that reaches it at the
/// least cost along the network: `facility` (the facility's id field value) and `cost` (the
/// least cost from it to travel the whole line part: to its far end, over the directions it
/// runs). Every input feature is kept with its attributes and geometry; a feature no facility
/// reaches, or with a NULL or empty geometry, gets NULL facility and cost. A multi-part line
/// takes the facility of its cheapest part. Between facilities at equal cost the one placed on
/// the lower-numbered node wins (nodes are numbered by their coordinates), and between
/// facilities on one node the lowest id. The graph and how facilities are placed on it are those
/// of `od_matrix`. Runs natively (one Dijkstra from every facility at once), and on PostGIS
/// with pgRouting (`pgr_drivingDistance` from each facility, the rule above applied to its
/// costs).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkAllocation {
    /// The step or dataset layer of the facilities (points; another geometry counts as its
    /// centroid), in the lines' CRS.
    #[schemars(length(min = 1))]
    pub facilities: String,
    /// The facilities' field naming each facility (copied to `facility`).
    #[schemars(length(min = 1))]
    pub facility_id: String,
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for NetworkAllocation {
    const NAME: &'static str = "network_allocation";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("facilities", self.facilities.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = check_points(ctx, 0, "facilities", "facility_id", &self.facility_id);
        for field in [fields::FACILITY, fields::COST] {
            problems.extend(check_new_field(field, ctx, "facilities"));
        }
        network_step(
            self.graph.graph(ctx),
            problems,
            NetworkAnalysis::Allocation {
                facility_id: self.facility_id.clone(),
            },
        )
    }
}
