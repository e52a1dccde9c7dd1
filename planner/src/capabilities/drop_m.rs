//! `drop_m`: remove the M value of every vertex.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Remove the M value (measure) of every vertex: XYM geometries become 2-D, XYZM ones 3-D
/// (XYZ: Z values are kept). Geometries without M, of any type, are left as they are; so are
/// attributes. NULL stays NULL; an empty geometry stays empty, without M.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DropM {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for DropM {
    const NAME: &'static str = "drop_m";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::DropM),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
