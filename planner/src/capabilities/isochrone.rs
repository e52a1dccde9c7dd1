//! `isochrone`: what each origin reaches along a line network within cost bands.

use schemars::JsonSchema;
use serde::Deserialize;

use super::network_graph::{GraphParams, check_points, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
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
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Isochrone {
    /// The step or dataset layer of the origins (points; another geometry counts as its
    /// centroid), in the lines' CRS.
    #[schemars(length(min = 1))]
    pub origins: String,
    /// The origins' field naming each origin (copied to `origin`).
    #[schemars(length(min = 1))]
    pub origin_id: String,
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
    fn band_problems(&self, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let path = ctx.at("bands");
        if self.bands.is_empty() || self.bands.len() > MAX_BANDS {
            return vec![Problem::new(
                path,
                format!("needs 1 to {MAX_BANDS} costs, got {}", self.bands.len()),
            )];
        }
        if let Some(bad) = self.bands.iter().find(|b| !(b.is_finite() && **b > 0.0)) {
            return vec![Problem::new(
                path,
                format!("every cost must be a number above 0, got {bad}"),
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
        vec![("origins", self.origins.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = self.band_problems(ctx);
        problems.extend(check_points(
            ctx,
            0,
            "origins",
            "origin_id",
            &self.origin_id,
        ));
        network_step(
            self.graph.graph(ctx),
            problems,
            NetworkAnalysis::Isochrone {
                origin_id: self.origin_id.clone(),
                bands: self.bands.clone(),
                polygons: matches!(self.output, IsochroneOutput::Polygons),
            },
        )
    }
}
