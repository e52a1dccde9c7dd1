//! The field identifying features in a validation report (`key`), and its default; or the
//! rows' positions (`position_key`).

use super::LowerContext;
use super::checks::require_columns;
use crate::error::Problem;
use crate::plan::validate::FeatureKey;
use crate::schema::{FieldType, GEOM};

/// The rows' 0-based positions with `position_key`, else [`feature_key`].
pub fn report_key(
    key: Option<&str>,
    position_key: bool,
    ctx: &LowerContext<'_>,
) -> Result<FeatureKey, Vec<Problem>> {
    match (key, position_key) {
        (Some(_), true) => Err(vec![Problem::new(
            ctx.at("position_key"),
            "features are identified by key or by position_key, not both: leave one out",
        )]),
        (None, true) => Ok(FeatureKey::Position),
        (key, false) => feature_key(key, ctx).map(FeatureKey::Field),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Column, Schema};

    fn schema(columns: &[(&str, FieldType)]) -> Schema {
        Schema {
            columns: columns
                .iter()
                .map(|(name, ty)| Column {
                    name: (*name).into(),
                    ty: *ty,
                })
                .collect(),
            crs: Some("EPSG:4326".into()),
        }
    }

    fn key_of(key: Option<&str>, input: Option<&Schema>) -> Result<String, String> {
        let ctx = LowerContext {
            step_id: "v",
            path: "p",
            input,
            others: &[],
            rasters: None,
        };
        feature_key(key, &ctx).map_err(|p| p[0].message.clone())
    }

    #[test]
    fn the_first_integer_field_is_the_default_key() {
        let layer = schema(&[
            ("name", FieldType::Text),
            ("code", FieldType::Integer),
            ("id", FieldType::Integer),
            (GEOM, FieldType::Geometry),
        ]);
        assert_eq!(key_of(None, Some(&layer)).unwrap(), "code");
        assert_eq!(key_of(Some("name"), Some(&layer)).unwrap(), "name");
        assert!(
            key_of(Some("nope"), Some(&layer))
                .unwrap_err()
                .contains("nope")
        );
        assert!(
            key_of(Some(GEOM), Some(&layer))
                .unwrap_err()
                .contains("geometry")
        );
        let texts = schema(&[("name", FieldType::Text), (GEOM, FieldType::Geometry)]);
        assert!(
            key_of(None, Some(&texts))
                .unwrap_err()
                .contains("no integer field")
        );
        assert!(key_of(None, None).unwrap_err().contains("not known"));
        assert_eq!(key_of(Some("name"), None).unwrap(), "name");
    }
}
