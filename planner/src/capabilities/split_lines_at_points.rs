//! `split_lines_at_points`: lines cut where points lie on (or near) them.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, check_new_field, require_columns};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::network::{GraphSpec, NetworkAnalysis, NetworkOp, SplitAtPoints};
use crate::plan::operator::Operator;

/// Cuts every line where a point of `ref_layer` within `tolerance` of it projects onto it (the
/// distance along the line to the line's point nearest the point, GEOS's projection; a
/// geometry other than a point cuts at its centroid). Each LineString — each part of a
/// MultiLineString on its own — gives one LineString row per piece, in the order of the rows,
/// their parts and along each part, with the line's attributes and `parent_field` (the line's
/// `id_field` value, or its 0-based row position without one); `part_field`, when named,
/// numbers the part among the line's parts from 0. Cuts within 1e-9 of an end of the part
/// (or of each other) are one, and pieces of length 1e-9 or less are dropped, so a point at a
/// line's end does not cut it. Rows without a line (NULL, empty, points, polygons) are
/// dropped. `work_crs` (an `EPSG:<code>`) cuts in that CRS: the lines are transformed to it and
/// the pieces back, and `ref_layer` must then be in it (GISPulse's `crs_meters`; a side
/// `reproject` step gives it); otherwise `ref_layer` must be in the lines' CRS. Runs on the
/// native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SplitLinesAtPoints {
    /// The step or dataset layer of the points.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Points this near a line cut it (default 0: points on it).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// Unit of `tolerance` (default metres; on longitude/latitude data give a `work_crs` or
    /// unit `crs`).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The field naming each line in `parent_field` (default: its row position).
    #[serde(default)]
    pub id_field: Option<String>,
    /// The field receiving the line's id (default `parent_edge_id`).
    #[serde(default = "default_parent_field")]
    #[schemars(length(min = 1))]
    pub parent_field: String,
    /// The field receiving the part's position in the line (default: none).
    #[serde(default)]
    pub part_field: Option<String>,
    /// Cut in this CRS (`EPSG:<code>`), `ref_layer` being in it.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_parent_field() -> String {
    "parent_edge_id".into()
}

impl CapabilityParams for SplitLinesAtPoints {
    const NAME: &'static str = "split_lines_at_points";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = check_new_field(&self.parent_field, ctx, "parent_field");
        if let Some(part) = &self.part_field {
            problems.extend(check_new_field(part, ctx, "part_field"));
            if *part == self.parent_field {
                problems.push(Problem::new(ctx.at("part_field"), "must differ from parent_field"));
            }
        }
        if let Some(id) = &self.id_field
            && let Err(found) = require_columns(ctx.input, std::slice::from_ref(id), ctx.at("id_field"))
        {
            problems.extend(found);
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            problems.push(Problem::new(ctx.at("tolerance"), "must be a number of 0 or more"));
        }
        let points_crs = ctx.others.first().copied().flatten().and_then(|s| s.crs.clone());
        let cut_crs = self.work_crs.clone().or_else(|| ctx.crs().map(str::to_owned));
        if let (Some(theirs), Some(cut)) = (&points_crs, &cut_crs)
            && !theirs.eq_ignore_ascii_case(cut)
        {
            problems.push(Problem::new(
                ctx.at("ref_layer"),
                format!("is in {theirs} but the lines are cut in {cut}: reproject the points to it first"),
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
                let tolerance = super::build_network_graph::crs_tolerance(self.tolerance, self.unit, ctx)?;
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::SplitAtPoints(SplitAtPoints {
                        tolerance,
                        id: self.id_field.clone(),
                        parent: self.parent_field.clone(),
                        part: self.part_field.clone(),
                    }),
                })])
            },
        )
    }
}
