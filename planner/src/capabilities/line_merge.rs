//! `line_merge`: join the parts of every line that meet end to end.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Join the parts of each line geometry that meet end to end into as few lines as possible: a
/// MultiLineString whose parts form one chain becomes a LineString; parts that branch (three
/// or more meeting at a point) or do not touch stay separate, in a MultiLineString. Parts are
/// joined within each feature, never across features. Without `directed` a part may be
/// reversed to join the next; with it, parts are joined only where their directions agree.
/// Only lines are merged: points, polygons, empty geometries and geometry collections holding
/// a polygon are left as they are; of a collection of lines and points, only the lines remain,
/// merged. Merged lines
/// keep their Z values but lose their M values; a line of zero length gives an empty geometry
/// collection. NULL stays NULL; attributes are unchanged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LineMerge {
    /// Join parts only where their directions agree (no part is reversed). Default false.
    #[serde(default)]
    pub directed: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for LineMerge {
    const NAME: &'static str = "line_merge";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::LineMerge {
                    directed: self.directed,
                }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
