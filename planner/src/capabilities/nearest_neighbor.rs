//! `nearest_neighbor`: attach the attributes of, and the distance to, the nearest `ref_layer`
//! feature.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{NearestOp, Operator, RefColumns};
use crate::schema::GEOM;

/// For each input feature, find the nearest feature of `ref_layer` and attach its attributes
/// named in `columns` (default: all; a name the input already has is prefixed with `ref_`) and the distance between the two geometries in
/// `distance_field` (default `distance`). Distances are in the units of the data's CRS (degrees
/// on lon/lat data: reproject to a metric CRS for metres). Every input feature is kept once;
/// with `max_distance`, features with no reference feature that close keep NULL attributes and
/// distance. NULL and empty geometries match nothing: an input feature's gives NULL attributes
/// and distance, a reference feature's is never the nearest. When several reference features
/// are equally near, the one whose geometry hashes lowest is chosen, the same on every engine
/// (on PostGIS, which searches its spatial index, among the 4 nearest).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NearestNeighbor {
    /// The step or dataset layer to search.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Reference attributes to bring (default: all).
    #[serde(default)]
    pub columns: Vec<String>,
    /// Search no further than this distance, in CRS units; must be > 0 (default: no limit).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub max_distance: Option<f64>,
    /// Field receiving the distance to the nearest feature.
    #[serde(default = "default_distance_field")]
    #[schemars(length(min = 1))]
    pub distance_field: String,
    /// Search in this projected CRS (`"EPSG:3857"`, or `"auto"`: GISPulse v2's choice): both
    /// layers are transformed to it, distances and `max_distance` are in its units, and the
    /// result is transformed back. Default: the layers' CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    /// Suffixes for a name both layers have, appended to the input's field and to the
    /// reference's (`["_left", "_right"]`, as GeoPandas names them) instead of `ref_`.
    #[serde(default)]
    pub suffixes: Option<[String; 2]>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_distance_field() -> String {
    "distance".to_owned()
}

impl CapabilityParams for NearestNeighbor {
    const NAME: &'static str = "nearest_neighbor";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within_searching(self.work_crs.as_deref(), ctx, |inner, transform| {
            self.lower_here(inner, transform)
        })
    }
}

impl NearestNeighbor {
    fn lower_here(
        &self,
        ctx: &LowerContext<'_>,
        reference_transform: Option<(String, String)>,
    ) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if let Some(max) = self.max_distance
            && !(max.is_finite() && max > 0.0)
        {
            problems.push(Problem::new(
                ctx.at("max_distance"),
                format!("must be a number greater than 0, got {max}"),
            ));
        }
        if self.distance_field == GEOM || self.distance_field.trim().is_empty() {
            problems.push(Problem::new(
                ctx.at("distance_field"),
                "cannot be used as a field name",
            ));
        } else if ctx.input.is_some_and(|s| s.has(&self.distance_field)) {
            problems.push(Problem::new(
                ctx.at("distance_field"),
                format!("field {} already exists in the input", self.distance_field),
            ));
        }
        if let Err(found) = require_columns(
            ctx.others.first().copied().flatten(),
            &self.columns,
            ctx.at("columns"),
        ) {
            problems.extend(found);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut operators = vec![Operator::Nearest(NearestOp {
            columns: RefColumns::requested(&self.columns),
            max_distance: self.max_distance,
            distance_field: self.distance_field.clone(),
            locate: None,
            reference_transform,
        })];
        if let Some(suffixes) = &self.suffixes {
            operators.extend(super::spatial_join::suffixed(suffixes, &self.columns, ctx)?);
        }
        Ok(operators)
    }
}
