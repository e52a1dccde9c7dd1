//! `planarize`: lines cut wherever they meet, as a table of nodes and pieces.

use schemars::JsonSchema;
use serde::Deserialize;

use super::build_network_graph::crs_tolerance;
use super::checks::{DistanceUnit, require_columns};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::network::{GraphSpec, NetworkAnalysis, NetworkOp, Planarize as PlanarizeOp};
use crate::plan::operator::Operator;

/// Makes a line network planar: every line part is cut where another part meets it (another
/// line, or another part of the same line; a line crossing itself is not cut there) — at each
/// point where they cross or touch, at both ends of a stretch they share and, with a
/// `tolerance`, at its point nearest another part that passes within the tolerance without
/// meeting it. The output is one table: first a row per node — `feature_type` `node`, `node_id`
/// (from 0, in the order of the first piece end on it), `degree` (piece ends on it), the mean
/// of those ends as its point; ends within `tolerance` are one node, or at 0 ends equal at 6
/// decimals — then a row per piece in the order of the rows, their parts and along each part —
/// `feature_type` `segment`, `parent_edge_id` (the line's `id_field` value, or its 0-based row
/// position), the line's attributes and the piece as a LineString. Cuts within 1e-9 of a
/// part's end are ignored. Rows without a line (NULL, empty, points, polygons) give nothing.
/// `work_crs` (an `EPSG:<code>`) cuts in that CRS, the output transformed back, as GISPulse's
/// `crs_meters`. Runs on the native backend (GEOS intersections) whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Planarize {
    /// The field naming each line in `parent_edge_id` (default: its row position).
    #[serde(default)]
    pub id_field: Option<String>,
    /// Parts this near are cut where they come nearest, and piece ends this near are one node
    /// (default 0).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// Unit of `tolerance` (default metres; on longitude/latitude data give a `work_crs` or
    /// unit `crs`).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// Cut in this CRS (`EPSG:<code>`).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Planarize {
    const NAME: &'static str = "planarize";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if let Some(id) = &self.id_field
            && let Err(found) =
                require_columns(ctx.input, std::slice::from_ref(id), ctx.at("id_field"))
        {
            problems.extend(found);
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            problems.push(Problem::new(ctx.at("tolerance"), "must be a number of 0 or more"));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| {
                let tolerance = crs_tolerance(self.tolerance, self.unit, ctx)?;
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::Planarize(PlanarizeOp {
                        tolerance,
                        id: self.id_field.clone(),
                    }),
                })])
            },
        )
    }
}
