//! `steiner_tree`: the network edges that link a set of terminals.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphSpec, NetworkAnalysis, NetworkOp, Steiner};
use crate::plan::operator::Operator;

/// An approximate minimum Steiner tree: the edges of the line network (the step's input)
/// that link the terminals of `ref_layer` (each at the network node nearest it; a geometry
/// other than a point by its centroid), by Mehlhorn's algorithm as networkx's `steiner_tree`
/// computes it (its cost at most twice the optimum): every node given its closest terminal,
/// the cheapest link between each two terminals' regions, a minimum spanning tree of those
/// links, the shortest paths they stand for, a minimum spanning tree of those paths' edges,
/// and the leaves that are not terminals pruned. The network is undirected: each line part an
/// edge between its end points, ends equal at 6 decimals one node (numbered from 0 by first
/// appearance), an edge's cost its `weight_field` value or its planar length in the CRS's
/// units, between two nodes only the last part listed (a networkx `Graph`, as GISPulse builds
/// it). One row per tree edge: `u`, `v` (its nodes, lower first), `weight` (its cost) and its
/// line part; ordered by `u` then `v`. Fewer than two distinct terminal nodes give no rows;
/// terminals the network does not link fail the step. `work_crs` builds the network in that
/// CRS (an `EPSG:<code>`, or `angular:EPSG:<code>` for longitude/latitude data only), the
/// terminals being in it (a side `reproject` step gives them); otherwise the terminals must be
/// in the lines' CRS. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SteinerTree {
    /// The step or dataset layer of the terminals.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// The lines' field giving each edge's cost (default: its length).
    #[serde(default)]
    pub weight_field: Option<String>,
    /// Build the network in this CRS (`EPSG:<code>` or `angular:EPSG:<code>`).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for SteinerTree {
    const NAME: &'static str = "steiner_tree";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if let Some(weight) = &self.weight_field
            && let Err(found) =
                require_columns(ctx.input, std::slice::from_ref(weight), ctx.at("weight_field"))
        {
            return Err(found);
        }
        let terminals_crs = ctx.others.first().copied().flatten().and_then(|s| s.crs.clone());
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| {
                if let (Some(theirs), Some(ours)) = (&terminals_crs, ctx.crs())
                    && !theirs.eq_ignore_ascii_case(ours)
                {
                    return Err(vec![Problem::new(
                        ctx.at("ref_layer"),
                        format!("is in {theirs} but the network is built in {ours}: reproject the terminals to it first"),
                    )]);
                }
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::Steiner(Steiner {
                        weight: self.weight_field.clone(),
                    }),
                })])
            },
        )
    }
}
