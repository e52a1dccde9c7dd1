//! `cluster_network_dbscan`: density-based clusters of points by distance along a network.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, check_new_field, require_columns, resolve_distance};
use super::cluster_kmeans::default_output;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::network::{GraphSpec, NetworkAnalysis, NetworkDbscan, NetworkOp};
use crate::plan::operator::Operator;

/// Clusters the features by DBSCAN over their distances along the line network of
/// `ref_layer`: each feature (a geometry other than a point by its centroid) sits on the
/// network's node nearest it, and two features are within `eps` when their nodes are joined
/// by a path of cost `eps` or less (features on one node: 0). The network is an undirected
/// graph: each line part an edge between its end points, ends equal at 6 decimals one node,
/// an edge's cost its `weight_field` value or its planar length in the CRS's units; between
/// two nodes only the last edge listed counts (a networkx `Graph`, as GISPulse builds it). A
/// feature with at least `min_samples` features within `eps` (itself included) is a core
/// point; `output` numbers the clusters from 0 in the order of their first core point, −1 is
/// noise; a feature without a geometry has no neighbour but itself. `work_crs` clusters in
/// that CRS (the features transformed, the output back; an `EPSG:<code>`, or
/// `angular:EPSG:<code>` for longitude/latitude data only), `ref_layer` being in it (a side
/// `reproject` step gives it); otherwise `ref_layer` must be in the features' CRS. Runs on the
/// native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClusterNetworkDbscan {
    /// The step or dataset layer of the network's lines.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// The neighbourhood radius along the network.
    pub eps: f64,
    /// Unit of `eps` (default metres; on longitude/latitude data give a `work_crs` or unit
    /// `crs`).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// Features within `eps` (the feature itself included) that make a core point (default 5).
    #[serde(default = "default_min_samples")]
    #[schemars(range(min = 1))]
    pub min_samples: u32,
    /// The lines' field giving each edge's cost (default: its length).
    #[serde(default)]
    pub weight_field: Option<String>,
    /// The cluster field (default `cluster`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    /// Cluster in this CRS (`EPSG:<code>` or `angular:EPSG:<code>`), `ref_layer` being in it.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_min_samples() -> u32 {
    5
}

impl CapabilityParams for ClusterNetworkDbscan {
    const NAME: &'static str = "cluster_network_dbscan";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = check_new_field(&self.output, ctx, "output");
        if !(self.eps.is_finite() && self.eps > 0.0) {
            problems.push(Problem::new(ctx.at("eps"), "must be a number above 0"));
        }
        if self.min_samples == 0 {
            problems.push(Problem::new(ctx.at("min_samples"), "must be at least 1"));
        }
        let lines = ctx.others.first().copied().flatten();
        if let Some(weight) = &self.weight_field
            && let Err(found) =
                require_columns(lines, std::slice::from_ref(weight), ctx.at("weight_field"))
        {
            problems.extend(found);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let lines_crs = lines.and_then(|s| s.crs.clone());
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| {
                if let (Some(theirs), Some(ours)) = (&lines_crs, ctx.crs())
                    && !theirs.eq_ignore_ascii_case(ours)
                {
                    return Err(vec![Problem::new(
                        ctx.at("ref_layer"),
                        format!("is in {theirs} but the features are clustered in {ours}: reproject the lines to it first"),
                    )]);
                }
                let eps = resolve_distance(self.eps, self.unit, ctx, "eps")?;
                if eps.geodesic {
                    return Err(vec![Problem::new(
                        ctx.at("eps"),
                        "a distance in metres on longitude/latitude data: give a projected work_crs (GISPulse: crs_meters) or unit crs",
                    )]);
                }
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::NetworkDbscan(NetworkDbscan {
                        eps: eps.value,
                        min_samples: self.min_samples,
                        weight: self.weight_field.clone(),
                        output: self.output.clone(),
                    }),
                })])
            },
        )
    }
}
