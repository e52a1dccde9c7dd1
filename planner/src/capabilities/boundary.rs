//! `boundary`: replace every geometry by its boundary.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Replace each geometry by its boundary; attributes are unchanged. A polygon's boundary is its
/// rings as a MultiLineString (one line per ring, holes included); a line's is its two end
/// points as a MultiPoint (empty for a closed line; of a MultiLineString, the end points not
/// shared by two of its parts); a point's is empty (an empty MultiPoint). Z and M values are
/// kept; an empty boundary is 2-D. NULL stays NULL; an empty geometry gives an empty
/// MultiPoint (points, lines) or MultiLineString (polygons). A geometry collection has no
/// boundary: it gives NULL.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Boundary {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for Boundary {
    const NAME: &'static str = "boundary";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::Boundary),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
