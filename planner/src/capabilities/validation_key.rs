//! The field identifying features in a validation report (`key`), and its default.

use super::LowerContext;
use super::checks::require_columns;
use crate::error::Problem;
use crate::schema::{FieldType, GEOM};

/// `key` as given, else the input's first integer field; a problem when neither is known.
pub fn feature_key(key: Option<&str>, ctx: &LowerContext<'_>) -> Result<String, Vec<Problem>> {
    if let Some(key) = key {
        if key == GEOM {
            return Err(vec![Problem::new(
                ctx.at("key"),
                "the geometry cannot identify features: name an attribute",
            )]);
        }
        require_columns(ctx.input, &[key.to_owned()], ctx.at("key"))?;
        return Ok(key.to_owned());
    }
    match ctx.input {
        Some(schema) => schema
            .attributes()
            .find(|c| c.ty == FieldType::Integer)
            .map(|c| c.name.clone())
            .ok_or_else(|| {
                vec![Problem::new(
                    ctx.at("key"),
                    "the input has no integer field to identify features by: name one in key",
                )]
            }),
        None => Err(vec![Problem::new(
            ctx.at("key"),
            "the input's fields are not known: name the field identifying features in key",
        )]),
    }
}
