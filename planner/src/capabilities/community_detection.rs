//! `community_detection`: communities of a line network by greedy modularity.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{check_new_field, require_columns};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{Communities, GraphSpec, NetworkAnalysis, NetworkOp};
use crate::plan::operator::Operator;

/// How communities are found.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CommunityMethod {
    /// Clauset–Newman–Moore greedy modularity maximisation (networkx's
    /// `greedy_modularity_communities`).
    #[default]
    GreedyModularity,
}

/// Each line of a network (the step's input) given its community: the network's nodes split
/// into communities by Clauset–Newman–Moore greedy modularity maximisation, as networkx's
/// `greedy_modularity_communities` runs it (every node its own community, then the pair whose
/// merge raises modularity most merged, equal gains by the lower pair of node numbers, until
/// every merge would lower it). The network is undirected: each line part an edge between its
/// end points, ends equal at 6 decimals one node (numbered from 0 by first appearance), an
/// edge weighted by its `weight_field` value or its planar length in the CRS's units (heavier
/// edges bind more), between two nodes only the last part listed (a networkx `Graph`, as
/// GISPulse builds it). `output` numbers the communities from 0, the one with the most nodes
/// first (equal sizes: in the order of the node networkx keeps for each). A line gets the
/// community of its ends when all its parts' ends share one, else −1 (a line between two
/// communities, or no line). `work_crs` builds the network in that CRS (an `EPSG:<code>`, or
/// `angular:EPSG:<code>` for longitude/latitude data only). Each merge scans the candidate
/// pairs in order (an ordered set of gains): fine for networks of tens of thousands of nodes.
/// Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CommunityDetection {
    /// The method (default and only one: `greedy_modularity`).
    #[serde(default)]
    pub method: CommunityMethod,
    /// The field giving each edge's weight (default: its length).
    #[serde(default)]
    pub weight_field: Option<String>,
    /// The community field (default `community_id`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    /// Build the network in this CRS (`EPSG:<code>` or `angular:EPSG:<code>`).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_output() -> String {
    "community_id".into()
}

impl CapabilityParams for CommunityDetection {
    const NAME: &'static str = "community_detection";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        // The one method; a second becomes a field of `Communities`.
        let CommunityMethod::GreedyModularity = self.method;
        let mut problems = check_new_field(&self.output, ctx, "output");
        if let Some(weight) = &self.weight_field
            && let Err(found) =
                require_columns(ctx.input, std::slice::from_ref(weight), ctx.at("weight_field"))
        {
            problems.extend(found);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |_| {
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::Communities(Communities {
                        weight: self.weight_field.clone(),
                        output: self.output.clone(),
                    }),
                })])
            },
        )
    }
}
