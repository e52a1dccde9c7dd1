//! `swap_xy`: swap the x and y coordinates of every vertex.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Swap the x and y coordinates of every vertex (longitude/latitude becomes
/// latitude/longitude and back), e.g. to repair data whose axes were read in the wrong order.
/// The CRS stays as declared; Z and M values are kept. Every geometry type; attributes are
/// unchanged. NULL stays NULL; empty geometries are left as they are.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SwapXy {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for SwapXy {
    const NAME: &'static str = "swap_xy";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::SwapXy),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
