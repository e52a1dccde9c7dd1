//! `snap_to_grid`: round every coordinate to a grid.

use schemars::JsonSchema;
use serde::Deserialize;

use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Round every x and y to the nearest multiple of `size`, given in the units of the data's CRS
/// (degrees on lon/lat data), with GEOS's precision reducer (`ST_ReducePrecision`), which keeps
/// the result valid: consecutive vertices of a line or ring that land on the same grid point
/// become one, parts that collapse (a line shorter than the grid, a polygon thinner than it)
/// are removed, and polygons of one feature that come to touch are joined. A geometry that
/// collapses entirely becomes empty; a Multi* stays a Multi*; the points of a MultiPoint are
/// all kept, even when several land on one grid point. Z values are kept as they are (not
/// rounded); M values are dropped. Every geometry type; attributes are unchanged. NULL stays
/// NULL; empty geometries are left as they are. The precision reducer refuses invalid
/// geometries: see `on_invalid`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SnapToGrid {
    /// The grid's spacing, in the units of the data's CRS; must be > 0.
    #[schemars(range(min = 0.0))]
    pub size: f64,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    /// Snap in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the geometry is transformed to it, snapped to a grid of its units, and
    /// transformed back. Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for SnapToGrid {
    const NAME: &'static str = "snap_to_grid";
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

impl SnapToGrid {
    fn lower_here(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.size.is_finite() && self.size > 0.0) {
            return Err(vec![Problem::new(
                ctx.at("size"),
                format!("must be a number greater than 0, got {}", self.size),
            )]);
        }
        Ok(self.on_invalid.before(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::SnapToGrid { size: self.size }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })]))
    }
}
