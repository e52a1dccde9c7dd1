//! `build_network_graph`: a line layer's graph as a table of nodes and edges.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, require_columns, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::network::{GraphSpec, GraphTable, NetworkAnalysis, NetworkOp};
use crate::plan::operator::Operator;

/// The graph of a line layer as one table: first a row per node — `feature_type` `node`,
/// `node_id` (from 0, in the order of the node's first line end, rows then parts in order),
/// `degree` (line ends on it: a loop counts twice) and the node's point (the mean of its line
/// ends) — then a row per edge, each part of each line in order — `feature_type` `edge`,
/// `edge_id` (the line's `id_field` value, or its 0-based row position), `from_node` and
/// `to_node` (the nodes of its first and last vertex), `length_m` (its planar length in the
/// CRS's units), `weight` (the `weight_field` value, when named), the line's attributes and
/// the part as a LineString. Line ends within `tolerance` of each other are one node (single
/// linkage: a chain of near ends is one node); with `tolerance` 0 ends are one node when their
/// coordinates rounded to 6 decimals are equal. Rows without a line (NULL, empty, points,
/// polygons) give no edge. `work_crs` builds the graph in that CRS (the lines transformed, the
/// table back): an `EPSG:<code>`, or `angular:EPSG:<code>` to do so only for
/// longitude/latitude data (GISPulse's rule). Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BuildNetworkGraph {
    /// The field naming each line in `edge_id` (default: its row position).
    #[serde(default)]
    pub id_field: Option<String>,
    /// A field copied to each edge's `weight` (default: none).
    #[serde(default)]
    pub weight_field: Option<String>,
    /// Line ends this near are one node (default 0: equal at 6 decimals).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// Unit of `tolerance` (default metres; on longitude/latitude data give a `work_crs` or
    /// unit `crs`).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// Build the graph in this CRS (`EPSG:<code>` or `angular:EPSG:<code>`).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for BuildNetworkGraph {
    const NAME: &'static str = "build_network_graph";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        for (param, field) in [("id_field", &self.id_field), ("weight_field", &self.weight_field)] {
            if let Some(field) = field
                && let Err(found) =
                    require_columns(ctx.input, std::slice::from_ref(field), ctx.at(param))
            {
                problems.extend(found);
            }
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
                    analysis: NetworkAnalysis::GraphTable(GraphTable {
                        tolerance,
                        id: self.id_field.clone(),
                        weight: self.weight_field.clone(),
                    }),
                })])
            },
        )
    }
}

/// A graph tool's end-point tolerance in the CRS's units (0 stays 0); metres on
/// longitude/latitude data are refused, with the way out.
pub fn crs_tolerance(
    tolerance: f64,
    unit: DistanceUnit,
    ctx: &LowerContext<'_>,
) -> Result<f64, Vec<Problem>> {
    if tolerance == 0.0 {
        return Ok(0.0);
    }
    let resolved = resolve_distance(tolerance, unit, ctx, "tolerance")?;
    if resolved.geodesic {
        return Err(vec![Problem::new(
            ctx.at("tolerance"),
            "a tolerance in metres on longitude/latitude data: give a projected work_crs (GISPulse: crs_meters) or unit crs",
        )]);
    }
    Ok(resolved.value)
}
