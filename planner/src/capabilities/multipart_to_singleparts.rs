//! `multipart_to_singleparts`: one feature per part of every multi-part geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::explode_common::explode;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::relational::ExplodeKind;

/// Split every multi-part geometry (MultiPolygon, MultiLineString, MultiPoint, geometry
/// collections, nested ones too) into one feature per simple part, the attributes repeated,
/// with the part's number (from 1, in the geometry's order) in `index_field`. A single-part
/// geometry gives one feature with index 1. A NULL or empty geometry gives one feature with a
/// NULL geometry and a NULL index (empty parts inside a collection are kept as parts).
/// `singleparts_to_multipart` is the reverse.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MultipartToSingleparts {
    /// The field numbering each feature's parts (default `part`); must not exist yet.
    #[serde(default = "default_index")]
    #[schemars(length(min = 1))]
    pub index_field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_index() -> String {
    "part".into()
}

impl CapabilityParams for MultipartToSingleparts {
    const NAME: &'static str = "multipart_to_singleparts";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        explode(ExplodeKind::Parts, &self.index_field, None, ctx)
    }
}
