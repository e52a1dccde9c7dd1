//! `od_matrix`: the least cost along a line network from each origin to each destination.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::network_graph::{GraphParams, RouteEnds, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphMatrix, GraphSpec, NetworkOp};
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
///
/// With `points` instead of origins and destinations, every two rows of that one layer are
/// routed between over the graph GISPulse builds (a networkx `Graph`: each line part an
/// undirected edge between its ends, ends equal at 6 decimals one node, between two nodes only
/// the last part listed, its cost the `cost_field` value or its planar length in the CRS's
/// units; each point at its nearest node): one row per origin row and other destination row
/// reached within `max_cost` (default: any cost), origin-major, with `origin` and
/// `destination` (the `point_id` field's values, default the rows' positions from 0), `cost`,
/// `edges` (the path's edge count) and the path as one line (its edges merged; the origin's
/// own geometry when both rows share a node). `include_missing` adds a row for each row and
/// itself (cost 0, no edge) and for each destination not reached (cost NULL, no edge), both
/// with the origin's geometry. Runs natively on every engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OdMatrix {
    #[serde(flatten)]
    pub ends: Option<RouteEnds>,
    /// The step or dataset layer every two rows of which are routed between, instead of
    /// origins and destinations (in the lines' CRS).
    #[serde(default)]
    pub points: Option<String>,
    /// With `points`: the field naming each point (default: its row position from 0).
    #[serde(default)]
    pub point_id: Option<String>,
    /// With `points`: the largest cost of a path kept (default: any).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub max_cost: Option<f64>,
    /// With `points`: rows for each point and itself and for the pairs no path links too.
    #[serde(default)]
    pub include_missing: bool,
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
        match (&self.ends, &self.points) {
            (Some(ends), _) => ends.inputs(),
            (None, Some(points)) => vec![("points", points.clone())],
            (None, None) => Vec::new(),
        }
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        match (&self.ends, &self.points) {
            (Some(ends), None) => {
                if self.point_id.is_some() || self.max_cost.is_some() || self.include_missing {
                    return Err(vec![Problem::new(
                        ctx.at("points"),
                        "point_id, max_cost and include_missing apply to a matrix over points",
                    )]);
                }
                network_step(
                    self.graph.graph(ctx),
                    ends.problems(ctx),
                    NetworkAnalysis::OdMatrix {
                        origin_id: ends.origin_id.clone(),
                        destination_id: ends.destination_id.clone(),
                    },
                )
            }
            (None, Some(_)) => self.between_rows(ctx),
            (Some(_), Some(_)) => Err(vec![Problem::new(
                ctx.at("points"),
                "give either origins and destinations or points, not both",
            )]),
            (None, None) => Err(vec![Problem::new(
                ctx.at("origins"),
                "is required (with origin_id, destinations and destination_id), or points",
            )]),
        }
    }
}

impl OdMatrix {
    /// The matrix between every two rows of `points` over GISPulse's graph.
    fn between_rows(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems =
            self.graph
                .simple_graph_problems(ctx, "points", "a matrix over points runs on");
        if self.max_cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            problems.push(Problem::new(ctx.at("max_cost"), "must be a finite cost of 0 or more"));
        }
        if let Some(points) = ctx.others.first().copied().flatten() {
            if let Some(id) = &self.point_id
                && let Err(found) =
                    require_columns(Some(points), std::slice::from_ref(id), ctx.at("point_id"))
            {
                problems.extend(found);
            }
            if let (Some(lines), Some(theirs)) = (ctx.crs(), points.crs.as_deref())
                && lines != theirs
            {
                problems.push(Problem::new(
                    ctx.at("points"),
                    format!("is in {theirs} but the lines are in {lines}: reproject one layer first"),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Network(NetworkOp {
            graph: GraphSpec::end_points(),
            analysis: NetworkAnalysis::GraphMatrix(GraphMatrix {
                weight: self.graph.cost_field.clone(),
                id: self.point_id.clone(),
                max_cost: self.max_cost,
                include_missing: self.include_missing,
            }),
        })])
    }
}
