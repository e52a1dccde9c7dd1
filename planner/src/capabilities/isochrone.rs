//! `isochrone`: what each origin reaches along a line network within cost bands.

use schemars::JsonSchema;
use serde::Deserialize;

use super::network_graph::{GraphParams, check_points, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphReach, GraphSpec, NetworkOp};
use crate::plan::operator::{NetworkAnalysis, Operator};

/// Most bands a step may ask for.
const MAX_BANDS: usize = 100;

/// What `isochrone` outputs.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IsochroneOutput {
    /// One row per origin and line part reached, in the first band that reaches all of it.
    #[default]
    Edges,
    /// One row per origin and band: the convex hull of every line part reached within it.
    Polygons,
    /// With `origin_point`: one row per band, the union of the reached lines buffered by
    /// `buffer`.
    Buffers,
}

/// The parts of a line network (the step's input) each origin reaches within cost bands.
/// `bands` lists the bands' upper costs, strictly ascending (in the cost's unit: metres of
/// length by default). A line part is reached when it can be travelled end to end: its reach
/// cost is the least cost to its far end, over the directions it runs. With `output: edges`
/// (default), one row per origin and reached part: `origin` (the id field's value), `band`
/// (1 for the first band whose upper cost is at least the reach cost), `cost` (the reach cost)
/// and the part's line; parts beyond the last band are left out. With `output: polygons`, one
/// row per origin and band reaching anything: `band`, `cost` (the band's upper cost) and the
/// convex hull of every part reached within that cost (bands include the ones below them).
/// An origin with a NULL or empty geometry reaches nothing. The graph and how origins are placed
/// on it are those of `od_matrix`; origin ids should be unique (polygons are grouped by them
/// on PostGIS). Runs natively (Dijkstra from each origin, in parallel); on the PostGIS engine
/// with pgRouting (`pgr_drivingDistance`).
///
/// With `origin_point` instead of `origins` (GISPulse's form): what the graph GISPulse builds
/// (a networkx `Graph`: each line part an undirected edge between its ends, ends equal at 6
/// decimals one node, between two nodes only the last part listed, its cost the `cost_field`
/// value or its planar length in the CRS's units) reaches from the node nearest the point: a
/// node within a band when its least cost is at most the band's, an edge when either of its
/// nodes is (so every edge at the start node). Bands may then be 0. With `output: buffers`,
/// one row per band reaching an edge: `cost` (the band's) and the union of every reached edge
/// buffered by `buffer` (GEOS, 16 segments a quarter circle); with `output: edges` (one band),
/// one row per reached edge in the order networkx lists the graph's edges: `cost` (the edge's
/// own) and its line part. Bands all 0 reach nothing. Runs natively on every engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Isochrone {
    /// The step or dataset layer of the origins (points; another geometry counts as its
    /// centroid), in the lines' CRS.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub origins: Option<String>,
    /// The origins' field naming each origin (copied to `origin`).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub origin_id: Option<String>,
    /// The start `[x, y]` in the lines' CRS, instead of `origins` (see above).
    #[serde(default)]
    pub origin_point: Option<[f64; 2]>,
    /// With `output: buffers`, the buffer distance around each reached line (CRS units).
    #[serde(default)]
    pub buffer: Option<f64>,
    /// The bands' upper costs, strictly ascending, each above 0 (1 to 100 bands).
    #[schemars(length(min = 1, max = 100))]
    pub bands: Vec<f64>,
    /// `edges` (default) or `polygons`.
    #[serde(default)]
    pub output: IsochroneOutput,
    #[serde(flatten)]
    pub graph: GraphParams,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl Isochrone {
    /// Problems with the bands (with `from_point`, 0 is a band too).
    fn band_problems(&self, ctx: &LowerContext<'_>, from_point: bool) -> Vec<Problem> {
        let path = ctx.at("bands");
        if self.bands.is_empty() || self.bands.len() > MAX_BANDS {
            return vec![Problem::new(
                path,
                format!("needs 1 to {MAX_BANDS} costs, got {}", self.bands.len()),
            )];
        }
        let low = if from_point { "of at least 0" } else { "above 0" };
        if let Some(bad) = self
            .bands
            .iter()
            .find(|b| !(b.is_finite() && (**b > 0.0 || (from_point && **b == 0.0))))
        {
            return vec![Problem::new(
                path,
                format!("every cost must be a number {low}, got {bad}"),
            )];
        }
        match self.bands.windows(2).find(|pair| pair[0] >= pair[1]) {
            Some(pair) => vec![Problem::new(
                path,
                format!(
                    "the costs must be strictly ascending: {} then {}",
                    pair[0], pair[1]
                ),
            )],
            None => Vec::new(),
        }
    }
}

impl CapabilityParams for Isochrone {
    const NAME: &'static str = "isochrone";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.origins
            .iter()
            .map(|origins| ("origins", origins.clone()))
            .collect()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if let Some(from) = self.origin_point {
            return self.reach_from_point(ctx, from);
        }
        let mut problems = self.band_problems(ctx, false);
        let (Some(_), Some(origin_id)) = (&self.origins, &self.origin_id) else {
            problems.push(Problem::new(
                ctx.at("origins"),
                "origins and origin_id are required (or origin_point)",
            ));
            return Err(problems);
        };
        if matches!(self.output, IsochroneOutput::Buffers) || self.buffer.is_some() {
            problems.push(Problem::new(
                ctx.at("output"),
                "buffers (and buffer) go with origin_point only",
            ));
        }
        problems.extend(check_points(ctx, 0, "origins", "origin_id", origin_id));
        network_step(
            self.graph.graph(ctx),
            problems,
            NetworkAnalysis::Isochrone {
                origin_id: origin_id.clone(),
                bands: self.bands.clone(),
                polygons: matches!(self.output, IsochroneOutput::Polygons),
            },
        )
    }
}

impl Isochrone {
    /// GISPulse's form: what its networkx graph reaches from one point.
    fn reach_from_point(
        &self,
        ctx: &LowerContext<'_>,
        from: [f64; 2],
    ) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = self.band_problems(ctx, true);
        if self.origins.is_some() || self.origin_id.is_some() {
            problems.push(Problem::new(
                ctx.at("origin_point"),
                "give either origins and origin_id or origin_point, not both",
            ));
        }
        if !from.iter().all(|v| v.is_finite()) {
            problems.push(Problem::new(ctx.at("origin_point"), "must be two finite numbers"));
        }
        problems.extend(self.graph.simple_graph_problems(
            ctx,
            "origin_point",
            "reaching from a point runs on",
        ));
        let buffer = match (self.output, self.buffer) {
            (IsochroneOutput::Buffers, Some(b)) if b.is_finite() && b > 0.0 => Some(b),
            (IsochroneOutput::Buffers, _) => {
                problems.push(Problem::new(ctx.at("buffer"), "output buffers needs a buffer distance above 0"));
                None
            }
            (IsochroneOutput::Edges, None) if self.bands.len() == 1 => None,
            (IsochroneOutput::Edges, None) => {
                problems.push(Problem::new(ctx.at("bands"), "edges from a point take one band"));
                None
            }
            (IsochroneOutput::Edges, Some(_)) => {
                problems.push(Problem::new(ctx.at("buffer"), "goes with output buffers"));
                None
            }
            (IsochroneOutput::Polygons, _) => {
                problems.push(Problem::new(ctx.at("output"), "from a point the outputs are edges or buffers"));
                None
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Network(NetworkOp {
            graph: GraphSpec::end_points(),
            analysis: NetworkAnalysis::GraphReach(GraphReach {
                weight: self.graph.cost_field.clone(),
                from,
                budgets: self.bands.clone(),
                buffer,
            }),
        })])
    }
}
