//! `densify_vertices`: add vertices so no segment is longer than a length.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ShapeExpr};

/// Add vertices to lines and polygon rings so that no segment is longer than `max_length`:
/// each longer segment is cut into the fewest equal pieces that are short enough (a segment of
/// 10 with `max_length` 3 becomes four pieces of 2.5). Existing vertices are kept. `unit`
/// defaults to metres: on geographic (lon/lat) data the pieces are equal arcs of the great
/// circle between the two vertices, at most `max_length` metres long on a sphere of the
/// Earth's mean radius (6,371,008.8 m); on projected data metric units are converted to the
/// CRS's units and the pieces are straight. `unit: crs` (or `degrees` on lon/lat) cuts
/// straight segments in the data's coordinates. Points are unchanged. The result is 2-D (Z and
/// M are dropped). NULL stays NULL; an empty geometry stays empty. Attributes are unchanged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DensifyVertices {
    /// The longest a segment may be; at least 0.000001.
    #[schemars(range(min = 0.000001))]
    pub max_length: f64,
    /// Unit of `max_length` (default metres).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// Cut in this projected CRS (`"EPSG:3857"`, or `"auto"`: GISPulse v2's choice): the
    /// geometry is transformed to it, cut into straight pieces there, and transformed back.
    /// Default: none (great circles on lon/lat data).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for DensifyVertices {
    const NAME: &'static str = "densify_vertices";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| self.lower_here(ctx),
        )
    }
}

impl DensifyVertices {
    fn lower_here(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.max_length.is_finite() && self.max_length > 0.0) {
            return Err(vec![Problem::new(
                ctx.at("max_length"),
                format!("must be a number greater than 0, got {}", self.max_length),
            )]);
        }
        let resolved = resolve_distance(self.max_length, self.unit, ctx, "max_length")?;
        Ok(replace_geometry(GeoExpr::Shape(ShapeExpr::Densify {
            max_length: resolved.value,
            geodesic: resolved.geodesic,
        })))
    }
}
