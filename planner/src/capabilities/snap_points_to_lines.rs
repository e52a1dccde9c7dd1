//! `snap_points_to_lines`: points moved onto their nearest lines.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, check_new_field, require_columns, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::network::{
    GraphSpec, MAX_SNAP_CANDIDATES, NetworkAnalysis, NetworkOp, SnapFields, SnapToLines,
};
use crate::plan::operator::Operator;

/// Snaps each point (a geometry other than a point by its centroid) onto its `k` nearest
/// lines of `ref_layer` (or onto every line within `max_distance`), nearest first: one row per
/// line with the point's attributes, `edge_id_field` (the line's `ref_id_field` value),
/// `measure_field` (the distance along the line to its point nearest the point, GEOS's
/// projection; a MultiLineString's parts measured one after the other), `offset_field` (the
/// distance to the line), `snapped_field` true, `rank_field` (1 the nearest) and that point on
/// the line as geometry. Lines at distances within 1e-9 of each other rank by their ids
/// (numbers before text); with `k` 1 the lowest id among the lines within 1e-9 of the nearest
/// is taken. A point snapped to no line (none within `max_distance`, or a NULL or empty
/// geometry) keeps one row with its geometry, `snapped_field` false, `rank_field` 1, NULL
/// `edge_id_field` and `measure_field`, and `offset_field` its distance to the nearest line
/// (NULL without one). Distances are in the CRS's units. `work_crs` (an `EPSG:<code>`) snaps in
/// that CRS (the points transformed, the output back), `ref_layer` being in it (GISPulse's
/// `crs_meters`; a side `reproject` step gives it); otherwise `ref_layer` must be in the
/// points' CRS. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SnapPointsToLines {
    /// The step or dataset layer of the lines.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// The lines' field naming each line.
    #[schemars(length(min = 1))]
    pub ref_id_field: String,
    /// How many nearest lines each point is snapped to (default 1, at most 100).
    #[serde(default = "default_k")]
    #[schemars(range(min = 1, max = 100))]
    pub k: u32,
    /// Snap to every line this near instead (default: the `k` nearest, however far).
    #[serde(default)]
    pub max_distance: Option<f64>,
    /// Unit of `max_distance` (default metres; on longitude/latitude data give a `work_crs`
    /// or unit `crs`).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The field receiving the line's id (default `edge_id`).
    #[serde(default = "default_edge_id")]
    pub edge_id_field: String,
    /// The field receiving the distance along the line (default `measure`).
    #[serde(default = "default_measure")]
    pub measure_field: String,
    /// The field receiving the distance to the line (default `offset_distance`).
    #[serde(default = "default_offset")]
    pub offset_field: String,
    /// The field saying whether the point was snapped (default `snapped`).
    #[serde(default = "default_snapped")]
    pub snapped_field: String,
    /// The field receiving the line's rank, 1 the nearest (default `rank`).
    #[serde(default = "default_rank")]
    pub rank_field: String,
    /// Snap in this CRS (`EPSG:<code>`), `ref_layer` being in it.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_k() -> u32 {
    1
}
fn default_edge_id() -> String {
    "edge_id".into()
}
fn default_measure() -> String {
    "measure".into()
}
fn default_offset() -> String {
    "offset_distance".into()
}
fn default_snapped() -> String {
    "snapped".into()
}
fn default_rank() -> String {
    "rank".into()
}

impl CapabilityParams for SnapPointsToLines {
    const NAME: &'static str = "snap_points_to_lines";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let fields = [
            ("edge_id_field", &self.edge_id_field),
            ("measure_field", &self.measure_field),
            ("offset_field", &self.offset_field),
            ("snapped_field", &self.snapped_field),
            ("rank_field", &self.rank_field),
        ];
        let mut problems = Vec::new();
        for (i, (param, name)) in fields.iter().enumerate() {
            problems.extend(check_new_field(name, ctx, param));
            if let Some((other, _)) = fields[..i].iter().find(|(_, n)| n == name) {
                problems.push(Problem::new(ctx.at(param), format!("must differ from {other}")));
            }
        }
        if !(1..=MAX_SNAP_CANDIDATES).contains(&self.k) {
            problems.push(Problem::new(
                ctx.at("k"),
                format!("must be between 1 and {MAX_SNAP_CANDIDATES}"),
            ));
        }
        if let Some(d) = self.max_distance
            && !(d.is_finite() && d >= 0.0)
        {
            problems.push(Problem::new(ctx.at("max_distance"), "must be a number of 0 or more"));
        }
        let lines = ctx.others.first().copied().flatten();
        if let Err(found) = require_columns(
            lines,
            std::slice::from_ref(&self.ref_id_field),
            ctx.at("ref_id_field"),
        ) {
            problems.extend(found);
        }
        let snap_crs = self.work_crs.clone().or_else(|| ctx.crs().map(str::to_owned));
        if let (Some(theirs), Some(snap)) = (lines.and_then(|s| s.crs.as_deref()), &snap_crs)
            && !theirs.eq_ignore_ascii_case(snap)
        {
            problems.push(Problem::new(
                ctx.at("ref_layer"),
                format!("is in {theirs} but the points are snapped in {snap}: reproject the lines to it first"),
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
                let max_distance = match self.max_distance {
                    Some(d) => {
                        let resolved = resolve_distance(d, self.unit, ctx, "max_distance")?;
                        if resolved.geodesic {
                            return Err(vec![Problem::new(
                                ctx.at("max_distance"),
                                "a distance in metres on longitude/latitude data: give a projected work_crs (GISPulse: crs_meters) or unit crs",
                            )]);
                        }
                        Some(resolved.value)
                    }
                    None => None,
                };
                Ok(vec![Operator::Network(NetworkOp {
                    graph: GraphSpec::end_points(),
                    analysis: NetworkAnalysis::SnapToLines(SnapToLines {
                        id: self.ref_id_field.clone(),
                        k: self.k,
                        max_distance,
                        fields: SnapFields {
                            edge_id: self.edge_id_field.clone(),
                            measure: self.measure_field.clone(),
                            offset: self.offset_field.clone(),
                            snapped: self.snapped_field.clone(),
                            rank: self.rank_field.clone(),
                        },
                    }),
                })])
            },
        )
    }
}
