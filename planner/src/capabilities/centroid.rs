//! `centroid`: replace every geometry by its centroid.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Replace each geometry by its centroid (centre of mass), a point; attributes are unchanged.
/// The centroid of a concave polygon or of a multi-part geometry may lie outside the geometry.
/// It is computed in the data's coordinates (planar, also on lon/lat data).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Centroid {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Centroid {
    const NAME: &'static str = "centroid";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::Centroid),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
