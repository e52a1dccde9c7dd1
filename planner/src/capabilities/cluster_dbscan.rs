//! `cluster_dbscan`: density-based clusters of a layer's points.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, resolve_distance};
use super::cluster_kmeans::default_output;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ScaleKind, ScaleOp};
use crate::schema::GEOM;

/// Cluster the features by DBSCAN on their points (the centroid standing for a line or
/// polygon): a point with at least `min_samples` points (itself
/// included) within `eps` is a core point; core points within `eps` of each other share a
/// cluster, and a point within `eps` of a core point joins its cluster. `cluster` numbers the
/// clusters from 0 in the order of their first core point; −1 is noise; NULL a NULL or empty
/// geometry. Border points reachable from two clusters join the one found first, walking the
/// features in order, as scikit-learn's `DBSCAN` does (the same labels on the same distances).
/// `eps` is in metres by default: on longitude/latitude data distances are then great-circle
/// distances on a sphere of the Earth's mean radius (6,371,008.8 m, scikit-learn's
/// `metric="haversine"`), on projected data `eps` is converted to the CRS's units; unit `crs`
/// takes it in the layer's own units. `work_crs` (an `EPSG:<code>`) clusters the points of
/// the layer transformed to that CRS (its centroids there), as GISPulse's `crs_meters`. Runs on
/// the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClusterDbscan {
    /// The neighbourhood radius.
    pub eps: f64,
    /// Unit of `eps` (default metres).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// Points (the point itself included) within `eps` that make a core point (default 5).
    #[serde(default = "default_min_samples")]
    #[schemars(range(min = 1))]
    pub min_samples: u32,
    /// The cluster field (default `cluster`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    /// Cluster in this CRS (`EPSG:<code>`): the layer transformed, the output back.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_min_samples() -> u32 {
    5
}

impl CapabilityParams for ClusterDbscan {
    const NAME: &'static str = "cluster_dbscan";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(vec![Problem::new(ctx.at("eps"), "must be a number above 0")]);
        }
        if self.min_samples == 0 {
            return Err(vec![Problem::new(ctx.at("min_samples"), "must be at least 1")]);
        }
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| {
                let eps = resolve_distance(self.eps, self.unit, ctx, "eps")?;
                Ok(vec![Operator::owned(ScaleOp {
                    field: GEOM.to_owned(),
                    kind: ScaleKind::Dbscan {
                        eps: eps.value,
                        min_samples: self.min_samples,
                        geodesic: eps.geodesic,
                        time: None,
                    },
                    output: self.output.clone(),
                })])
            },
        )
    }
}
