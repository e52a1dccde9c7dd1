//! `reverse_lines`: reverse the direction of every line.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Reverse the order of the vertices of every line, and of every part of a MultiLineString, so
/// that it runs from its end to its start (the parts keep their order). Polygons have their
/// rings reversed too, which flips their orientation (clockwise and counter-clockwise) without
/// changing their shape; points are unchanged; the parts of a geometry collection are each
/// treated so. Z and M values travel with their vertices. NULL stays NULL; empty geometries
/// are left as they are. With `lines_only: true` only LineStrings and MultiLineStrings are
/// reversed; polygons and collections are left as they are.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ReverseLines {
    /// Reverse only LineStrings and MultiLineStrings (default false).
    #[serde(default)]
    pub lines_only: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for ReverseLines {
    const NAME: &'static str = "reverse_lines";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::Reverse {
                    lines_only: self.lines_only,
                }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
