//! `force_geometry_type`: make geometry types uniform, all Multi* or single where possible.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Single or multi-part geometries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GeometryForm {
    /// Every Point, LineString and Polygon becomes a MultiPoint, MultiLineString or
    /// MultiPolygon of one part.
    Multi,
    /// Every Multi* of exactly one part becomes that part.
    Single,
}

/// Make the geometry types of a layer uniform, e.g. for formats that hold one type per layer.
/// With `type` `multi`, every Point, LineString and Polygon becomes a MultiPoint,
/// MultiLineString or MultiPolygon of one part (an empty one an empty 2-D Multi* of its type);
/// Multi* and geometry collections are left as they are. With `single`, every MultiPoint,
/// MultiLineString or MultiPolygon of exactly one part becomes that part; Multi* of several
/// parts or of none (empty), single geometries and geometry collections (even of one part) are
/// left as they are. Z and M values are kept; attributes are unchanged. NULL stays NULL.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ForceGeometryType {
    /// `multi` or `single`.
    #[serde(rename = "type")]
    pub form: GeometryForm,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for ForceGeometryType {
    const NAME: &'static str = "force_geometry_type";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let function = match self.form {
            GeometryForm::Multi => GeoExpr::ForceMulti,
            GeometryForm::Single => GeoExpr::ForceSingle,
        };
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(function),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
