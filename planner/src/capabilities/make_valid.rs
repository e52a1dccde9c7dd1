//! `make_valid`: repair invalid geometries.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Repair invalid geometries (self-intersecting rings, holes crossing their shell, spikes,
/// collapsed parts) with GEOS `MakeValid`, keeping only the parts of the input's dimension: a
/// bow-tie polygon becomes a MultiPolygon of two triangles, a polygon collapsed to a line an
/// empty MultiPolygon, a line whose vertices are all equal an empty line. Of an invalid
/// geometry collection, the repaired parts of its highest dimension are kept. Valid geometries
/// (all points among them) are left as they are, and so are attributes. NULL stays NULL; empty
/// geometries are valid and unchanged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MakeValid {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for MakeValid {
    const NAME: &'static str = "make_valid";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::MakeValid),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
