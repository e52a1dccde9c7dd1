//! `cluster_st_dbscan`: density-based clusters of a layer's points in space and time.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, require_columns, resolve_distance};
use super::cluster_kmeans::default_output;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ScaleKind, ScaleOp, TimeGate};
use crate::schema::{FieldType, GEOM};

/// Cluster the features by ST-DBSCAN: DBSCAN (as `cluster_dbscan`: the centroid standing for
/// a line or polygon, `eps` in metres by default, `min_samples` counting the point itself,
/// labels from 0 in the order of their first core point, −1 noise) where two features are
/// neighbours only when they are within `eps` in space **and** their `time_field` values are at
/// most `eps_time` seconds apart. The time field holds timestamps, dates or ISO 8601 text
/// (`2024-05-01`, `2024-05-01T08:30:00`; a time zone is taken to UTC); a feature whose time is
/// NULL or unreadable has no neighbour but itself (noise unless `min_samples` is 1), as one
/// without a geometry gets NULL. `work_crs` (an `EPSG:<code>`) measures in that CRS, as
/// GISPulse's `crs_meters`. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClusterStDbscan {
    /// The field holding each feature's time.
    #[schemars(length(min = 1))]
    pub time_field: String,
    /// The neighbourhood radius in space.
    pub eps: f64,
    /// Unit of `eps` (default metres).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The neighbourhood in time: seconds (default 3600).
    #[serde(default = "default_eps_time")]
    pub eps_time: f64,
    /// Neighbours (the feature itself included) that make a core point (default 5).
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

fn default_eps_time() -> f64 {
    3600.0
}

fn default_min_samples() -> u32 {
    5
}

impl CapabilityParams for ClusterStDbscan {
    const NAME: &'static str = "cluster_st_dbscan";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if !(self.eps.is_finite() && self.eps > 0.0) {
            problems.push(Problem::new(ctx.at("eps"), "must be a number above 0"));
        }
        if !(self.eps_time.is_finite() && self.eps_time > 0.0) {
            problems.push(Problem::new(ctx.at("eps_time"), "must be a number of seconds above 0"));
        }
        if self.min_samples == 0 {
            problems.push(Problem::new(ctx.at("min_samples"), "must be at least 1"));
        }
        if let Err(found) = require_columns(
            ctx.input,
            std::slice::from_ref(&self.time_field),
            ctx.at("time_field"),
        ) {
            problems.extend(found);
        }
        if let Some(column) = ctx
            .input
            .and_then(|s| s.columns.iter().find(|c| c.name == self.time_field))
            && matches!(column.ty, FieldType::Integer | FieldType::Double | FieldType::Boolean)
        {
            problems.push(Problem::new(
                ctx.at("time_field"),
                format!(
                    "{} holds {:?} values: give timestamps, dates or ISO 8601 text",
                    self.time_field, column.ty
                ),
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
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
                        time: Some(TimeGate {
                            field: self.time_field.clone(),
                            max_seconds: self.eps_time,
                        }),
                    },
                    output: self.output.clone(),
                })])
            },
        )
    }
}
