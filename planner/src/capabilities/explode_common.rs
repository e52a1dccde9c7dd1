//! What `multipart_to_singleparts`, `extract_vertices`, `extract_segments` and `extract_holes`
//! share: the check of their index field and the operator they lower to.

use super::LowerContext;
use crate::error::Problem;
use crate::plan::operator::{Operator, ReshapeOp};
use crate::plan::relational::ExplodeKind;

/// One row per piece of `kind`, numbered in `index` (and over the whole layer in `row_index`
/// when given); neither may be an input field.
pub fn explode(
    kind: ExplodeKind,
    index: &str,
    row_index: Option<(&str, &str)>,
    ctx: &LowerContext<'_>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    let mut problems = new_field_problems("index_field", index, ctx);
    if let Some((key, name)) = row_index {
        problems.extend(new_field_problems(key, name, ctx));
        if name == index {
            problems.push(Problem::new(ctx.at(key), "must differ from index_field"));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(vec![Operator::Reshape(ReshapeOp::Explode {
        kind,
        index: index.to_owned(),
        row_index: row_index.map(|(_, name)| name.to_owned()),
    })])
}

/// Why `name`, given at `key`, cannot name a new field: empty, or already an input field.
fn new_field_problems(key: &str, name: &str, ctx: &LowerContext<'_>) -> Vec<Problem> {
    if name.is_empty() {
        return vec![Problem::new(ctx.at(key), "must not be empty")];
    }
    if ctx.input.is_some_and(|schema| schema.has(name)) {
        return vec![Problem::new(
            ctx.at(key),
            format!("the input already has a field {name:?}: name another field"),
        )];
    }
    Vec::new()
}
