//! `intersects`: keep the features that match (or, inverted, match no) `ref_layer` feature.

use schemars::JsonSchema;
use serde::Deserialize;

use super::spatial_join::{check_distance, default_predicate};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, SpatialFilterOp, SpatialPredicate};

/// Keep the input features that satisfy `predicate(input.geom, ref.geom)` (default
/// `intersects`) with at least one feature of `ref_layer`; with `invert: true`, keep those that
/// satisfy it with none. Each kept feature appears once, however many reference features it
/// matches, with its own attributes only (use `spatial_join` to bring the reference's).
/// `distance` (in CRS units) is required by, and only allowed with, `predicate: dwithin`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Intersects {
    /// The step or dataset layer to test against.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Spatial relation between the input and reference geometries.
    #[serde(default = "default_predicate")]
    pub predicate: SpatialPredicate,
    /// Distance in CRS units, for `predicate: dwithin`.
    #[serde(default)]
    pub distance: Option<f64>,
    /// Keep the features that match no reference feature instead (default false).
    #[serde(default)]
    pub invert: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Intersects {
    const NAME: &'static str = "intersects";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        check_distance(self.predicate, self.distance, ctx)?;
        Ok(vec![Operator::SpatialFilter(SpatialFilterOp {
            predicate: self.predicate,
            distance: self.distance,
            negate: self.invert,
        })])
    }
}
