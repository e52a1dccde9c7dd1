//! `cluster_hdbscan`: hierarchical density-based clusters of a layer's points.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::measures_geodesic;
use super::cluster_kmeans::default_output;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ScaleKind, ScaleOp};
use crate::schema::GEOM;

/// Cluster the features by HDBSCAN on their points (the centroid standing for a line or
/// polygon): the hierarchy of DBSCAN clusterings over every radius, condensed to clusters of at
/// least `min_cluster_size` points, the most persistent ones kept (excess of mass). `cluster`
/// numbers the clusters from 0; −1 is noise; NULL a NULL or empty geometry. The labels equal
/// scikit-learn's `HDBSCAN(min_cluster_size, min_samples)` on the same points. Distances are
/// the layer's coordinates' on projected data, great-circle metres on longitude/latitude (the
/// clusters do not depend on the unit). `probability` adds each point's membership
/// probability as scikit-learn's `probabilities_` (0 for noise). `work_crs` clusters the
/// points in another projected CRS (Euclidean there, as GISPulse clusters in `crs_meters`).
/// Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClusterHdbscan {
    /// The smallest group of points that counts as a cluster (default 5, at most 10000).
    #[serde(default = "default_min_cluster_size")]
    #[schemars(range(min = 2, max = 10000))]
    pub min_cluster_size: u32,
    /// Points (the point itself included) whose distance makes a point's core distance
    /// (default: `min_cluster_size`; at most 10000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    pub min_samples: Option<u32>,
    /// The cluster field (default `cluster`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    /// A field for each point's membership probability (default: none).
    #[serde(default)]
    pub probability: Option<String>,
    /// Cluster the points in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`:
    /// GISPulse v2's choice). Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_min_cluster_size() -> u32 {
    5
}

impl CapabilityParams for ClusterHdbscan {
    const NAME: &'static str = "cluster_hdbscan";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.min_cluster_size < 2 {
            return Err(vec![Problem::new(
                ctx.at("min_cluster_size"),
                "must be at least 2",
            )]);
        }
        let min_samples = self.min_samples.unwrap_or(self.min_cluster_size);
        if min_samples == 0 {
            return Err(vec![Problem::new(ctx.at("min_samples"), "must be at least 1")]);
        }
        if self.probability.as_deref() == Some(self.output.as_str()) {
            return Err(vec![Problem::new(
                ctx.at("probability"),
                "must differ from output",
            )]);
        }
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| {
                Ok(vec![Operator::owned(ScaleOp {
                    field: GEOM.to_owned(),
                    kind: ScaleKind::Hdbscan {
                        min_cluster_size: self.min_cluster_size,
                        min_samples,
                        geodesic: measures_geodesic(ctx),
                        probability: self.probability.clone(),
                    },
                    output: self.output.clone(),
                })])
            },
        )
    }
}
