//! `topology_check`: a layer of the geometry and topology problems of the input.

use schemars::JsonSchema;
use serde::Deserialize;

use super::validation_key::report_key;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ValidateCheck, ValidateOp};
use crate::plan::validate::{TopologyPredicates, TopologyProblem};

/// Report the input's geometry and topology problems as a layer, one row per problem:
/// `feature` (the `key` of the feature at fault; NULL for a gap), `related` (the other
/// feature's key for an overlap, else NULL), `problem`, `field` (always NULL here), `reason`
/// and `geom` locating the problem. Problems (`checks`, default all; an empty list checks
/// nothing): `null_geometry` (geometry NULL), `empty_geometry` (the empty geometry),
/// `invalid` (GEOS's validity reason, the text of PostGIS's `ST_IsValidReason` and Shapely's
/// `is_valid_reason`, e.g. `Self-intersection[10 5]`, GEOS 3.11 on every engine; the point the
/// reason names), `self_intersection` (a LineString or MultiLineString that is not simple: it
/// crosses or touches itself; the line), `overlap` (two valid polygons whose interiors
/// overlap, reported once, on the lower key: the polygonal part of their intersection),
/// `gap` (each hole of the union of the valid polygons: space enclosed by polygons and covered
/// by none, a hole inside one polygon included; the hole as a polygon), `dangle` (an end of a
/// line part, not closed, that touches no other line part, of its own feature or another; the
/// end point) and, with a `tolerance` above 0, `undershoot` instead of `dangle` when another
/// line part is within `tolerance` (CRS units) of the end. Invalid polygons take no part in
/// `overlap` and `gap` (GEOS cannot overlay them: `make_valid` first); NULL and empty
/// geometries take part in nothing but their own problem. Keys should be unique: features
/// sharing a key are not compared with each other. `key` defaults to the input's first
/// integer field; `position_key: true` identifies features by their 0-based position in the
/// input instead. With `summary: true` the output is instead one row per problem kind:
/// `problem`, `field` (NULL) and `count`, without geometry.
///
/// With `predicates: shapely` (on the native backend) the checks are Shapely's, as a
/// GeoPandas script applies them, feature by feature in input order: `invalid` is GEOS's
/// `isValid` with the whole feature as geometry, `self_intersection` is GEOS's `isSimple` on
/// every geometry type (a bow-tie polygon is both invalid and not simple; a MultiPoint with a
/// repeated point is not simple), `overlap` is GEOS's `overlaps` between any two polygons,
/// valid or not (interiors meeting, neither containing the other: equal and nested polygons
/// do not overlap), with their full intersection as geometry and its area in the reason
/// (`the polygons overlap (area=12.500000)`, six decimals); an overlay GEOS cannot do on
/// invalid polygons fails the step, naming the rows. `gap` and `dangle` are geomill's checks
/// only.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TopologyCheck {
    /// The field identifying features (default: the input's first integer field).
    #[serde(default)]
    pub key: Option<String>,
    /// Identify features by their 0-based row position in the input instead of a key field.
    #[serde(default)]
    pub position_key: bool,
    /// Whose predicates: `geomill` (default) or `shapely`.
    #[serde(default = "geomill")]
    pub predicates: TopologyPredicates,
    /// The problems looked for (default: all the predicates have; an empty list: none).
    #[serde(default)]
    pub checks: Option<Vec<TopologyProblem>>,
    /// How far short of another line a line end is an undershoot (CRS units; default 0: no
    /// undershoots, every free end is a dangle).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// One row per problem kind with its count instead of one row per problem.
    #[serde(default)]
    pub summary: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn geomill() -> TopologyPredicates {
    TopologyPredicates::Geomill
}

impl CapabilityParams for TopologyCheck {
    const NAME: &'static str = "topology_check";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !self.tolerance.is_finite() || self.tolerance < 0.0 {
            return Err(vec![Problem::new(
                ctx.at("tolerance"),
                "must be a finite distance of 0 or more",
            )]);
        }
        let key = report_key(self.key.as_deref(), self.position_key, ctx)?;
        if self.summary && self.predicates == TopologyPredicates::Shapely {
            return Err(vec![Problem::new(
                ctx.at("summary"),
                "summary is not available with this rule: count the report's rows instead",
            )]);
        }
        let mut checks = Vec::new();
        let shapely_has = |c: &TopologyProblem| {
            !matches!(c, TopologyProblem::Gap | TopologyProblem::Dangle)
        };
        let every: Vec<TopologyProblem> = TopologyProblem::ALL
            .into_iter()
            .filter(|c| self.predicates == TopologyPredicates::Geomill || shapely_has(c))
            .collect();
        for check in self.checks.as_deref().unwrap_or(&every) {
            if !checks.contains(check) {
                checks.push(*check);
            }
        }
        if self.predicates == TopologyPredicates::Shapely
            && let Some(check) = checks.iter().find(|c| !shapely_has(c))
        {
            return Err(vec![Problem::new(
                ctx.at("checks"),
                format!(
                    "{} is checked with predicates geomill only (Shapely has no such predicate)",
                    check.as_str()
                ),
            )]);
        }
        Ok(vec![Operator::Validate(ValidateOp {
            key,
            check: ValidateCheck::Topology {
                checks,
                tolerance: self.tolerance,
                predicates: self.predicates,
            },
            summary: self.summary,
        })])
    }
}
