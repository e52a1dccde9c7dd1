//! `extract_vertices`: one point feature per vertex of every geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::explode_common::explode;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::relational::ExplodeKind;

/// Replace every feature by one point feature per vertex of its geometry, the attributes
/// repeated, numbered from 1 in `index_field` in the geometry's order (part by part, the
/// exterior ring before the holes). Every vertex is kept: a closed ring's last vertex repeats
/// its first, as in the data. Z and M are kept. A NULL or empty geometry gives one feature with
/// a NULL geometry and a NULL index. `layer_index_field` also numbers the points from 1 over
/// the whole layer.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExtractVertices {
    /// The field numbering each feature's vertices (default `vertex`); must not exist yet.
    #[serde(default = "default_index")]
    #[schemars(length(min = 1))]
    pub index_field: String,
    /// A field numbering the output features from 1 over the whole layer, in order (none by
    /// default); must not exist yet.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub layer_index_field: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_index() -> String {
    "vertex".into()
}

impl CapabilityParams for ExtractVertices {
    const NAME: &'static str = "extract_vertices";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let layer_index = self
            .layer_index_field
            .as_deref()
            .map(|name| ("layer_index_field", name));
        explode(ExplodeKind::Vertices, &self.index_field, layer_index, ctx)
    }
}
