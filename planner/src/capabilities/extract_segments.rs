//! `extract_segments`: one line feature per segment of every geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::explode_common::explode;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::relational::ExplodeKind;

/// Replace every feature by one two-point LineString feature per segment of its lines and
/// polygon rings, the attributes repeated, numbered from 1 in `index_field` in the geometry's
/// order (part by part, the exterior ring before the holes, each ring from its first vertex).
/// A closed ring of n vertices (its last repeating its first) gives n - 1 segments. Z and M
/// are kept. A point, or a NULL or empty geometry, gives one feature with a NULL geometry and
/// a NULL index. With `across_parts`, the geometry's coordinates are read as one chain instead
/// (parts and rings one after the other, as GeoPandas lists them), so that a segment also joins
/// each part or ring's last vertex to the next one's first.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExtractSegments {
    /// The field numbering each feature's segments (default `segment`); must not exist yet.
    #[serde(default = "default_index")]
    #[schemars(length(min = 1))]
    pub index_field: String,
    /// Read all the geometry's coordinates as one chain across its parts and rings (default
    /// false: each line and ring on its own).
    #[serde(default)]
    pub across_parts: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_index() -> String {
    "segment".into()
}

impl CapabilityParams for ExtractSegments {
    const NAME: &'static str = "extract_segments";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let kind = if self.across_parts {
            ExplodeKind::ChainSegments
        } else {
            ExplodeKind::Segments
        };
        explode(kind, &self.index_field, None, ctx)
    }
}
