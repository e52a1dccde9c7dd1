//! What `multipart_to_singleparts`, `extract_vertices`, `extract_segments` and `extract_holes`
//! share: the check of their index field and the operator they lower to.

use super::LowerContext;
use crate::error::Problem;
use crate::plan::operator::{Operator, ReshapeOp};
use crate::plan::relational::ExplodeKind;

/// One row per piece of `kind`, numbered in `index`, which must not be an input field.
pub fn explode(
    kind: ExplodeKind,
    index: &str,
    ctx: &LowerContext<'_>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    if index.is_empty() {
        return Err(vec![Problem::new(
            ctx.at("index_field"),
            "must not be empty",
        )]);
    }
    if ctx.input.is_some_and(|schema| schema.has(index)) {
        return Err(vec![Problem::new(
            ctx.at("index_field"),
            format!("the input already has a field {index:?}: name another index field"),
        )]);
    }
    Ok(vec![Operator::Reshape(ReshapeOp::Explode {
        kind,
        index: index.to_owned(),
    })])
}
