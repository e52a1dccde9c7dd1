//! `network_allocation`: each line of a network given its nearest facility along the network,
//! or (with `network`) each point of the input allocated to a facility over a network.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{check_new_field, require_columns};
use super::network_graph::{GraphParams, check_points, network_step};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::network::{GraphAllocation, GraphSpec, NetworkOp, fields};
use crate::plan::operator::{NetworkAnalysis, Operator};
use crate::schema::Schema;

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
///
/// With `network` (a line layer), the step's input is the layer to allocate instead (points; a
/// geometry other than a point by its centroid), over the graph GISPulse builds of those lines
/// (a networkx `Graph`: each line part an undirected edge between its ends, ends equal at 6
/// decimals one node, between two nodes only the last part listed, its cost the `cost_field`
/// value or its planar length in the CRS's units): each facility with a geometry sits on the
/// node nearest it, each node takes the facility reaching it at the least cost within
/// `max_cost` (default: any), equal costs going to the facility listed first, and each input
/// feature takes its nearest node's `facility` and `cost` (both NULL when no facility reaches
/// that node, or for a NULL or empty geometry). `work_crs` allocates in that CRS (the input
/// transformed, the output back; an `EPSG:<code>`, or `angular:EPSG:<code>` for
/// longitude/latitude data only), the network and facilities being in it; otherwise they must
/// be in the input's CRS. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkAllocation {
    /// The step or dataset layer of the facilities (points; another geometry counts as its
    /// centroid), in the lines' CRS.
    #[schemars(length(min = 1))]
    pub facilities: String,
    /// The facilities' field naming each facility (copied to `facility`).
    #[schemars(length(min = 1))]
    pub facility_id: String,
    /// The step or dataset layer of the network's lines: the step's input is then the layer to
    /// allocate (see above).
    #[serde(default)]
    pub network: Option<String>,
    /// With `network`: the largest cost a facility reaches (default: any).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub max_cost: Option<f64>,
    /// With `network`: allocate in this CRS (`EPSG:<code>` or `angular:EPSG:<code>`).
    #[serde(default)]
    pub work_crs: Option<String>,
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
        match &self.network {
            Some(network) => vec![
                ("network", network.clone()),
                ("facilities", self.facilities.clone()),
            ],
            None => vec![("facilities", self.facilities.clone())],
        }
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.network.is_some() {
            return self.allocate_points(ctx);
        }
        if self.max_cost.is_some() || self.work_crs.is_some() {
            return Err(vec![Problem::new(
                ctx.at("network"),
                "max_cost and work_crs apply to allocating points over a network (give network)",
            )]);
        }
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

impl NetworkAllocation {
    /// The input's features allocated to facilities over the `network` layer's GISPulse graph.
    fn allocate_points(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let network = ctx.others.first().copied().flatten();
        let facilities = ctx.others.get(1).copied().flatten();
        let mut problems = Vec::new();
        if let Some(cost) = &self.graph.cost_field
            && let Err(found) =
                require_columns(network, std::slice::from_ref(cost), ctx.at("cost_field"))
        {
            problems.extend(found);
        }
        if self.graph.directed || self.graph.oneway_field.is_some() {
            problems.push(Problem::new(
                ctx.at("network"),
                "points are allocated over the undirected graph: directed and oneway_field do not apply",
            ));
        }
        if let Err(found) = require_columns(
            facilities,
            std::slice::from_ref(&self.facility_id),
            ctx.at("facility_id"),
        ) {
            problems.extend(found);
        }
        if self.max_cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            problems.push(Problem::new(
                ctx.at("max_cost"),
                "must be a finite cost of 0 or more",
            ));
        }
        for field in [fields::FACILITY, fields::COST] {
            problems.extend(check_new_field(field, ctx, "facilities"));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let crs_of = |layer: Option<&Schema>| layer.and_then(|s| s.crs.clone());
        let others = [
            ("network", crs_of(network)),
            ("facilities", crs_of(facilities)),
        ];
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| {
                let mut problems = Vec::new();
                for (param, crs) in &others {
                    if let (Some(theirs), Some(ours)) = (crs, ctx.crs())
                        && !theirs.eq_ignore_ascii_case(ours)
                    {
                        problems.push(Problem::new(
                            ctx.at(param),
                            format!("is in {theirs} but the features are allocated in {ours}: reproject it first"),
                        ));
                    }
                }
                if !problems.is_empty() {
                    return Err(problems);
                }
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::GraphAllocation(GraphAllocation {
                        weight: self.graph.cost_field.clone(),
                        facility_id: self.facility_id.clone(),
                        max_cost: self.max_cost,
                    }),
                })])
            },
        )
    }
}
