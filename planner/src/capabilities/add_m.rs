//! `add_m`: give every vertex an M value.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Give every vertex an M value (a measure, such as a distance along a route) of `value`: 2-D
/// geometries become XYM, 3-D ones XYZM (Z values are kept). Geometries that already have M
/// keep their M values. Every geometry type; attributes are unchanged. NULL stays NULL; an
/// empty geometry stays empty, with M.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddM {
    /// The M given to every vertex that has none (default 0).
    #[serde(default)]
    pub value: f64,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for AddM {
    const NAME: &'static str = "add_m";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::AddM { value: self.value }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
