//! `connected_components`: the parts of a line layer linked at their end points.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, check_new_field};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::network::{Components, GraphSpec, NetworkAnalysis, NetworkOp};
use crate::plan::operator::Operator;

/// Each line feature given the connected part it belongs to, lines linked only where their
/// end points meet (lines that cross without sharing an end are not linked; every part of a
/// multi-part line is in the line's part, even apart from it): `component` numbers the parts
/// from 0, the part with the most features first (equal counts: the one whose first feature
/// comes first), and `component_size` counts its features. End points within `tolerance` of
/// each other are one node (single linkage: a chain of near ends links its far ends too); with
/// `tolerance` 0 ends are equal when their coordinates rounded to 6 decimals are. A feature
/// without a line (NULL, empty, a point or polygon) gets −1 and 0. Every feature is kept with
/// its attributes and geometry. `work_crs` (an `EPSG:<code>`) measures the tolerance in that
/// CRS (the layer transformed, the output transformed back), as GISPulse's `crs_meters`.
/// Runs on the native backend whatever the engine (checked against networkx's
/// `connected_components`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ConnectedComponents {
    /// End points this near are one node (default 0: equal at 6 decimals).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// Unit of `tolerance` (default metres; on longitude/latitude data give a `work_crs` or
    /// unit `crs`).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The field numbering the parts (default `component_id`).
    #[serde(default = "default_component_field")]
    #[schemars(length(min = 1))]
    pub component_field: String,
    /// The field counting the features of each part (default `component_size`).
    #[serde(default = "default_size_field")]
    #[schemars(length(min = 1))]
    pub size_field: String,
    /// Measure the tolerance in this CRS (`EPSG:<code>`).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_component_field() -> String {
    "component_id".into()
}

fn default_size_field() -> String {
    "component_size".into()
}

impl CapabilityParams for ConnectedComponents {
    const NAME: &'static str = "connected_components";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = check_new_field(&self.component_field, ctx, "component_field");
        problems.extend(check_new_field(&self.size_field, ctx, "size_field"));
        if self.component_field == self.size_field {
            problems.push(Problem::new(
                ctx.at("size_field"),
                "must differ from component_field",
            ));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            problems.push(Problem::new(ctx.at("tolerance"), "must be a number of 0 or more"));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let work_crs = self.work_crs.as_deref().filter(|_| self.tolerance > 0.0);
        super::work_crs::within(work_crs, super::work_crs::Output::Geometry, ctx, |ctx| {
            let tolerance = super::build_network_graph::crs_tolerance(self.tolerance, self.unit, ctx)?;
            Ok(vec![Operator::Network(NetworkOp {
                graph: GraphSpec::end_points(),
                analysis: NetworkAnalysis::Components(Components {
                    tolerance,
                    component: self.component_field.clone(),
                    size: self.size_field.clone(),
                }),
            })])
        })
    }
}
