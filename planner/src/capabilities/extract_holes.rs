//! `extract_holes`: one polygon feature per hole of every polygon.

use schemars::JsonSchema;
use serde::Deserialize;

use super::explode_common::explode;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::relational::ExplodeKind;

/// Replace every feature by one Polygon feature per hole (interior ring) of its polygons, the
/// hole filled, the attributes repeated, numbered from 1 in `index_field` in the geometry's
/// order (part by part, ring by ring). The ring's vertices are kept as they are, orientation
/// included. A geometry without holes (points, lines, polygons with none), or a NULL or empty
/// one, gives one feature with a NULL geometry and a NULL index, so that every input feature
/// is still there: filter on the index to keep only the holes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExtractHoles {
    /// The field numbering each feature's holes (default `hole`); must not exist yet.
    #[serde(default = "default_index")]
    #[schemars(length(min = 1))]
    pub index_field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_index() -> String {
    "hole".into()
}

impl CapabilityParams for ExtractHoles {
    const NAME: &'static str = "extract_holes";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        explode(ExplodeKind::Holes, &self.index_field, None, ctx)
    }
}
