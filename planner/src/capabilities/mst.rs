//! `mst`: a minimum spanning tree, of a line network's graph or of a layer's points.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::network_graph::{GraphParams, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphSpec, GraphTree, NetworkOp};
use crate::plan::operator::{NetworkAnalysis, Operator};

/// What `mst` spans.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MstOf {
    /// The graph of the input's lines.
    #[default]
    Network,
    /// The input's points, every pair linked at its distance.
    Points,
    /// The graph's edges as node pairs (GISPulse's `mst`).
    Edges,
}

/// A minimum spanning tree (a forest, for a disconnected network).
///
/// With `of: network` (default): the features of a line network (the step's input) that form a
/// minimum spanning forest of its graph (see `od_matrix` for the graph): the least total cost
/// linking every node each connected part links, lines taken whichever way they run
/// (`directed` and `oneway_field` are ignored). Kept features keep their attributes and
/// geometry; a multi-part line is kept when any of its parts is in the forest. Between lines of
/// equal cost the one found first in the input is taken natively (Kruskal's order),
/// pgRouting's choice on PostGIS: the total cost is the same on every engine, the lines taken
/// may differ where costs tie. Runs natively (Kruskal over petgraph's union-find); on the
/// PostGIS engine with pgRouting (`pgr_kruskal`).
///
/// With `of: points`: the tree linking the input's points (another geometry counts as its
/// centroid; NULL and empty ones are left out) with the least total length, every pair a
/// candidate at its distance in metres (on the WGS 84 ellipsoid for longitude/latitude data).
/// One row per link: `from` (the `id_field` value of the point already in the tree), `to` (the
/// point it joins), `cost` and the straight line between them; Prim's order from the first
/// point, ties to the earlier row. At most 10,000 points. Runs natively on every engine.
///
/// With `of: edges` (GISPulse's `mst`): the graph GISPulse builds as a networkx `Graph` (each
/// line part an undirected edge between its ends, ends equal at 6 decimals one node numbered by
/// first appearance, between two nodes only the last part listed, its cost the `cost_field`
/// value or its planar length in CRS units) and its minimum spanning forest as networkx's
/// Kruskal finds it: one row per tree edge, `u` and `v` (its nodes, lower first), `weight` (its
/// cost) and the line part, ordered by `u`, then in the order taken. Runs natively on every
/// engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Mst {
    /// `network` (default), `points` or `edges`.
    #[serde(default)]
    pub of: MstOf,
    /// With `of: points`, the field naming each point (copied to `from` and `to`).
    #[serde(default)]
    pub id_field: Option<String>,
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
        match (self.of, &self.id_field) {
            (MstOf::Edges, _) => {
                let problems = self.graph.simple_graph_problems(ctx, "of", "edges spans");
                if !problems.is_empty() {
                    return Err(problems);
                }
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::GraphTree(GraphTree {
                        weight: self.graph.cost_field.clone(),
                    }),
                })])
            }
            (MstOf::Network, _) => {
                network_step(self.graph.graph(ctx), Vec::new(), NetworkAnalysis::SpanningTree)
            }
            (MstOf::Points, None) => Err(vec![Problem::new(
                ctx.at("id_field"),
                "is required with of: points (the field naming each point)",
            )]),
            (MstOf::Points, Some(id)) => {
                let mut problems = require_columns(ctx.input, std::slice::from_ref(id), ctx.at("id_field"))
                    .err()
                    .unwrap_or_default();
                if self.graph.cost_field.is_some() {
                    problems.push(Problem::new(
                        ctx.at("cost_field"),
                        "does not apply with of: points (links cost their length)",
                    ));
                }
                network_step(
                    self.graph.graph(ctx),
                    problems,
                    NetworkAnalysis::PointTree { id: id.clone() },
                )
            }
        }
    }
}
