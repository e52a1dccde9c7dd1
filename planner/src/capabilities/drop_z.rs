//! `drop_z`: remove the Z coordinate of every vertex.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Remove the Z coordinate (height) of every vertex: 3-D (XYZ) geometries become 2-D, XYZM
/// ones XYM (M values are kept). Geometries without Z, of any type, are left as they are; so
/// are attributes. NULL stays NULL; an empty geometry stays empty, without Z.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DropZ {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for DropZ {
    const NAME: &'static str = "drop_z";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::DropZ),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
