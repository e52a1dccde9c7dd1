//! `add_z`: give every vertex a Z coordinate.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Give every vertex a Z coordinate (height) of `value`: 2-D geometries become 3-D (XYZ), XYM
/// ones XYZM (M values are kept). Geometries that already have Z keep their Z values. Every
/// geometry type; attributes are unchanged. NULL stays NULL; an empty geometry stays empty,
/// with Z.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddZ {
    /// The Z given to every vertex that has none (default 0).
    #[serde(default)]
    pub value: f64,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for AddZ {
    const NAME: &'static str = "add_z";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::AddZ { value: self.value }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
