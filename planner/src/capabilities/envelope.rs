//! `envelope`: replace every geometry by its bounding box.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Replace each geometry by its bounding box (envelope), the smallest rectangle with sides
/// parallel to the axes that contains it: a polygon whose ring starts at the lower-left corner
/// and runs clockwise. A box without area is given as what it is: a point (a single point, or
/// parts all at one place) or a two-point line (a horizontal or vertical extent). Every
/// geometry type has a box; the result is 2-D (Z and M are dropped). Each feature gets its own
/// box: `union` first for the box of the whole layer. NULL stays NULL; an empty geometry is
/// left as it is.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Envelope {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Envelope {
    const NAME: &'static str = "envelope";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::Envelope),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
