//! `shortest_path`: the least-cost path along a line network between origins and destinations.

use schemars::JsonSchema;
use serde::Deserialize;

use super::network_graph::{GraphParams, RouteEnds, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphRoute, GraphSpec, NetworkOp};
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
///
/// With `origin_point` and `destination_point` instead of the two layers (GISPulse's form):
/// the path over the graph GISPulse builds (a networkx `Graph`: each line part an undirected
/// edge between its ends, ends equal at 6 decimals one node, between two nodes only the last
/// part listed, its cost the `cost_field` value or its planar length in the CRS's units), from
/// the node nearest the origin point to the node nearest the destination point (planar, in the
/// lines' CRS). One row per edge in path order: `path_order` from 0 and the edge's line part as
/// stored. No rows when both points fall on one node or no path links them. Runs natively on
/// every engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ShortestPath {
    #[serde(flatten)]
    pub ends: Option<RouteEnds>,
    /// The start `[x, y]` in the lines' CRS (with `destination_point`, instead of `origins`).
    #[serde(default)]
    pub origin_point: Option<[f64; 2]>,
    /// The end `[x, y]` in the lines' CRS (with `origin_point`).
    #[serde(default)]
    pub destination_point: Option<[f64; 2]>,
    /// With the two points: route in this projected CRS when the lines are in it already, or
    /// (`angular:EPSG:<code>`, `auto:angular`) when they are not in longitude/latitude; carrying
    /// lon/lat lines and the points to another CRS is not supported yet (reproject the lines
    /// first and give the points in their CRS).
    #[serde(default)]
    pub work_crs: Option<String>,
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
        self.ends.as_ref().map(RouteEnds::inputs).unwrap_or_default()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        match (&self.ends, self.origin_point, self.destination_point) {
            (None, Some(from), Some(to)) => self.between_points(ctx, from, to),
            (Some(_), None, None) if self.work_crs.is_some() => Err(vec![Problem::new(
                ctx.at("work_crs"),
                "applies to routes between origin_point and destination_point only",
            )]),
            (Some(ends), None, None) => network_step(
                self.graph.graph(ctx),
                ends.problems(ctx),
                NetworkAnalysis::ShortestPath {
                    origin_id: ends.origin_id.clone(),
                    destination_id: ends.destination_id.clone(),
                },
            ),
            (Some(_), _, _) => Err(vec![Problem::new(
                ctx.at("origin_point"),
                "give either origins and destinations (layers) or origin_point and destination_point, not both",
            )]),
            (None, _, _) => Err(vec![Problem::new(
                ctx.at("origins"),
                "is required (with origin_id, destinations and destination_id), or origin_point and destination_point",
            )]),
        }
    }
}

impl ShortestPath {
    /// GISPulse's form: the path between two points over its networkx graph.
    fn between_points(
        &self,
        ctx: &LowerContext<'_>,
        from: [f64; 2],
        to: [f64; 2],
    ) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems =
            self.graph
                .simple_graph_problems(ctx, "origin_point", "routes between points run on");
        for (param, point) in [("origin_point", from), ("destination_point", to)] {
            if !point.iter().all(|v| v.is_finite()) {
                problems.push(Problem::new(ctx.at(param), "must be two finite numbers"));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let data_crs = ctx.crs().map(str::to_owned);
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |inner| {
                if inner.crs().map(str::to_owned) != data_crs {
                    return Err(vec![Problem::new(
                        ctx.at("work_crs"),
                        "carrying the lines and the two points to another CRS is not supported yet: reproject the lines first (reproject) and give the points in their CRS",
                    )]);
                }
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::GraphRoute(GraphRoute {
                        weight: self.graph.cost_field.clone(),
                        from,
                        to,
                    }),
                })])
            },
        )
    }
}
