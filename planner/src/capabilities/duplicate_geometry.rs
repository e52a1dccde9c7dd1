//! `duplicate_geometry`: a layer of the pairs of features with the same geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::validation_key::report_key;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ValidateCheck, ValidateOp};
use crate::plan::validate::DuplicateMatch;

/// Report the pairs of features whose geometries are duplicates, one row per pair on the
/// feature of the lower `key`: `feature`, `related` (the other feature's key), `problem`,
/// `field` (NULL), `reason` and `geom` (the feature's geometry). With `tolerance` 0 (the
/// default) the problem is `duplicate`: the geometries are equal after GEOS's normalisation
/// (`ST_Normalize`: another start vertex, ring orientation or order of parts is the same
/// geometry), compared as well-known binary, so the same type and the same coordinates
/// exactly. With a `tolerance` above 0 the problem is `near_duplicate`: the discrete
/// Hausdorff distance between them (GEOS's, PostGIS's `ST_HausdorffDistance`, Shapely's
/// `hausdorff_distance`: the farthest vertex of either from the other's linework) is at most
/// `tolerance` (CRS units); exact duplicates are near duplicates too. NULL and empty
/// geometries are never duplicates. Keys should be unique: features sharing a key are not
/// compared with each other. `key` defaults to the input's first integer field;
/// `position_key: true` identifies features by their 0-based position in the input instead.
/// With `rule: first_in_row_order` (GeoPandas scripts' rule, on the native backend) rows are
/// read in input order and each duplicate is reported once, as `feature` with its own
/// geometry, against the first row it duplicates as `related`: with `tolerance` 0, the first
/// row whose geometry prints the same well-known text as GEOS writes it (coordinates to 16
/// decimals, trailing zeros trimmed; no normalisation, so another start vertex or ring
/// direction differs; empty geometries count); with a `tolerance`, each row not yet claimed
/// claims every later unclaimed row whose minimum distance to it is at most `tolerance`
/// (touching and overlapping geometries are near duplicates; NULL and empty geometries take
/// no part). With `summary: true` the output is one row per problem kind with its `count`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DuplicateGeometry {
    /// The field identifying features (default: the input's first integer field).
    #[serde(default)]
    pub key: Option<String>,
    /// Identify features by their 0-based row position in the input instead of a key field.
    #[serde(default)]
    pub position_key: bool,
    /// Which pairs are duplicates: `normalized` (default) or `first_in_row_order`.
    #[serde(default = "normalized")]
    pub rule: DuplicateMatch,
    /// The largest discrete Hausdorff distance between near duplicates (CRS units; default 0:
    /// exact duplicates only).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// One row per problem kind with its count instead of one row per pair.
    #[serde(default)]
    pub summary: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn normalized() -> DuplicateMatch {
    DuplicateMatch::Normalized
}

impl CapabilityParams for DuplicateGeometry {
    const NAME: &'static str = "duplicate_geometry";
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
        if self.summary && self.rule == DuplicateMatch::FirstInRowOrder {
            return Err(vec![Problem::new(
                ctx.at("summary"),
                "summary is not available with this rule: count the report's rows instead",
            )]);
        }
        Ok(vec![Operator::Validate(ValidateOp {
            key,
            check: ValidateCheck::Duplicates {
                tolerance: self.tolerance,
                rule: self.rule,
            },
            summary: self.summary,
        })])
    }
}
