//! `buffer`: grow (or, with a negative distance, shrink) every geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, resolve_distance};
use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Replace each geometry by its buffer at `distance`. Distances in metres (the default unit),
/// kilometres, feet or miles are honest on any data: on geographic (lon/lat) data they are
/// computed in a local azimuthal equidistant projection around each feature, on projected data
/// converted to the CRS's units. Data whose CRS is unknown is taken as lon/lat (EPSG:4326).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Buffer {
    /// Buffer distance (negative shrinks polygons).
    pub distance: f64,
    /// Unit of `distance`.
    #[serde(default)]
    pub unit: DistanceUnit,
    /// Segments per quarter circle (smoothness).
    #[serde(default = "default_segments")]
    #[schemars(range(min = 1, max = 64))]
    pub segments: u32,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    /// Compute in this projected CRS (`"EPSG:3857"`, or `"auto"`: GISPulse v2's choice):
    /// the geometry is transformed to it, the step runs in its units (the distance's unit then
    /// converts to them), and the result is transformed back. Default: true metres on lon/lat
    /// data.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_segments() -> u32 {
    8
}

impl CapabilityParams for Buffer {
    const NAME: &'static str = "buffer";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(self.work_crs.as_deref(), super::work_crs::Output::Geometry, ctx, |ctx| {
        let distance = resolve_distance(self.distance, self.unit, ctx, "distance")?;
        let value = ValueExpr::Geo(GeoExpr::Buffer {
            distance: distance.value,
            geodesic: distance.geodesic,
            segments: self.segments,
        });
        Ok(self.on_invalid.before(vec![Operator::Map(MapOp {
            set: vec![(GEOM.to_owned(), value, FieldType::Geometry)],
            ..MapOp::default()
        })]))
        })
    }
}
