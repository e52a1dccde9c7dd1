//! What `multipart_to_singleparts` and `extract_vertices` share: the check of their index
//! field and the operator they lower to.

use super::LowerContext;
use crate::error::Problem;
use crate::plan::operator::{Operator, ReshapeOp};

/// One row per part (or vertex) numbered in `index`, which must not be an input field.
pub fn explode(
    vertices: bool,
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
        vertices,
        index: index.to_owned(),
    })])
}
