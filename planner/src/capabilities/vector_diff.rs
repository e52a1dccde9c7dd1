//! `vector_diff`: the features added, removed and changed between two versions of a layer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::attribute_join::join_keys;
use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::diff::{DiffOp, DuplicateKeys, GeometryCompare};
use crate::schema::GEOM;

/// Compare the input (the new version of a layer) with `ref_layer` (the old version, a step
/// or a dataset layer), matching rows by the `key` fields both have, and keep one row per key
/// that was `added` (only in the input), `removed` (only in `ref_layer`) or `changed`; keys
/// whose rows are equal are left out. Each row has the input's fields (for a removed key, the
/// old row's values of the fields both layers have, NULL for the others; a field whose type
/// differs between the layers takes the type both fit) and its geometry (the old one for a
/// removed key), then `change_field` (default `change`: `added`, `removed` or `changed`) and
/// `changed_fields_field` (default `changed_fields`): for a changed row, the names of the
/// fields that differ, comma-separated in the input's field order, then `geometry` when the
/// geometries differ; NULL for added and removed rows. `keep: all` also keeps the keys whose
/// rows are equal, as `unchanged` with an empty `changed_fields` (default `changes`: only
/// those added, removed or changed). `fields` names the attributes
/// compared (default: every attribute both layers have, keys aside; fields of one layer only
/// are not compared; `[]`: none). Values are compared NULL-safely (NULL equals NULL and nothing else),
/// numbers as numbers, values of other differing types as text. Geometries
/// (`compare_geometry`): `exact` (default) compares their well-known binary (the same type,
/// the same vertices in the same order), `normalized` the binary after GEOS's normalisation
/// (`ST_Normalize`: another start vertex, ring orientation or order of parts is no change),
/// `hausdorff` calls them changed when their Hausdorff distance exceeds `tolerance` (CRS units;
/// required with it), `ignore` leaves them out; a NULL geometry equals only a NULL one, an
/// empty one only an empty one of the same type (with `hausdorff`, any empty one). Each key
/// must name one row of each layer: a key on several rows of either layer fails the run,
/// naming the key (`duplicate_keys: fail`, the default); with `duplicate_keys: last` the last
/// of those rows in the layer's order stands for the key. A row with a NULL key field matches nothing: it
/// is reported `added` (input) or `removed` (`ref_layer`). Both layers must be in the same CRS.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct VectorDiff {
    /// The old version of the layer: a step or a dataset layer.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// The fields identifying a feature in both versions.
    #[schemars(length(min = 1))]
    pub key: Vec<String>,
    /// The attributes compared (default: every attribute both layers have, keys aside; `[]`:
    /// none).
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// `exact` (default), `normalized`, `hausdorff` or `ignore`.
    #[serde(default)]
    pub compare_geometry: GeometryCompare,
    /// `compare_geometry: hausdorff`'s threshold, in CRS units.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// `changes` (default): only the keys added, removed or changed; `all`: every key.
    #[serde(default)]
    pub keep: DiffKeep,
    /// A key on several rows of a layer: `fail` (default) or `last` (its last row counts).
    #[serde(default)]
    pub duplicate_keys: DuplicateKeys,
    /// The field receiving `added`, `removed` or `changed` (default `change`).
    #[serde(default = "default_change_field")]
    #[schemars(length(min = 1))]
    pub change_field: String,
    /// The field receiving the changed fields' names (default `changed_fields`).
    #[serde(default = "default_changed_fields_field")]
    #[schemars(length(min = 1))]
    pub changed_fields_field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// Which keys a diff reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffKeep {
    /// The keys added, removed or changed.
    #[default]
    Changes,
    /// Every key, those whose rows are equal as `unchanged`.
    All,
}

fn default_change_field() -> String {
    "change".to_owned()
}

fn default_changed_fields_field() -> String {
    "changed_fields".to_owned()
}

impl VectorDiff {
    /// The output fields: valid names, distinct, not already input fields.
    fn output_problems(&self, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let mut problems = Vec::new();
        for (param, name) in [
            ("change_field", &self.change_field),
            ("changed_fields_field", &self.changed_fields_field),
        ] {
            if name == GEOM || name.trim().is_empty() {
                problems.push(Problem::new(ctx.at(param), "cannot be used as a field name"));
            } else if ctx.input.is_some_and(|s| s.has(name)) {
                problems.push(Problem::new(
                    ctx.at(param),
                    format!("the input already has a field {name:?}: name another field"),
                ));
            }
        }
        if self.change_field == self.changed_fields_field {
            problems.push(Problem::new(
                ctx.at("changed_fields_field"),
                "must differ from change_field",
            ));
        }
        problems
    }

    /// `tolerance`: a finite number, 0 or more, given exactly when geometries are compared by
    /// Hausdorff distance.
    fn tolerance_problems(&self, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let hausdorff = self.compare_geometry == GeometryCompare::Hausdorff;
        match self.tolerance {
            None if hausdorff => vec![Problem::new(
                ctx.at("tolerance"),
                "is required with compare_geometry: hausdorff",
            )],
            Some(_) if !hausdorff => vec![Problem::new(
                ctx.at("tolerance"),
                "is read only with compare_geometry: hausdorff",
            )],
            Some(t) if !(t.is_finite() && t >= 0.0) => vec![Problem::new(
                ctx.at("tolerance"),
                format!("must be a finite number, 0 or more, got {t}"),
            )],
            _ => Vec::new(),
        }
    }

    /// The compared fields: in both layers, neither a key nor the geometry.
    fn field_problems(&self, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let mut problems = Vec::new();
        let fields = self.fields.as_deref().unwrap_or_default();
        for field in fields {
            if field == GEOM {
                problems.push(Problem::new(
                    ctx.at("fields"),
                    "the geometry is compared by compare_geometry",
                ));
            } else if self.key.contains(field) {
                problems.push(Problem::new(
                    ctx.at("fields"),
                    format!("{field} is a key: keys are matched, not compared"),
                ));
            }
        }
        for schema in [ctx.input, ctx.others.first().copied().flatten()] {
            if let Err(found) = require_columns(schema, fields, ctx.at("fields")) {
                problems.extend(found);
            }
        }
        problems
    }
}

impl CapabilityParams for VectorDiff {
    const NAME: &'static str = "vector_diff";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = self.output_problems(ctx);
        problems.extend(self.field_problems(ctx));
        problems.extend(self.tolerance_problems(ctx));
        let old = ctx.others.first().copied().flatten();
        if let (Some(new_crs), Some(old_crs)) = (ctx.crs(), old.and_then(|s| s.crs.as_deref()))
            && new_crs != old_crs
        {
            problems.push(Problem::new(
                ctx.at("ref_layer"),
                format!(
                    "is in {old_crs} but the input is in {new_crs}: reproject one layer first"
                ),
            ));
        }
        let keys = match join_keys(&self.key, &self.key, ctx, ("key", "key")) {
            Ok(keys) => Some(keys),
            Err(found) => {
                problems.extend(found);
                None
            }
        };
        match keys {
            Some(keys) if problems.is_empty() => Ok(vec![Operator::owned(DiffOp {
                keys,
                fields: self.fields.clone(),
                geometry: self.compare_geometry,
                tolerance: self.tolerance.unwrap_or(0.0),
                keep_unchanged: self.keep == DiffKeep::All,
                duplicates: self.duplicate_keys,
                change_field: self.change_field.clone(),
                changed_fields_field: self.changed_fields_field.clone(),
            })]),
            _ => Err(problems),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::operator::Operator;
    use crate::schema::{Column, FieldType, Schema};
    use crate::sql::Dialect;
    use crate::sql::select::{Input, select};

    fn schema(columns: &[(&str, FieldType)], crs: &str) -> Schema {
        Schema {
            columns: columns
                .iter()
                .map(|(name, ty)| Column {
                    name: (*name).into(),
                    ty: *ty,
                })
                .collect(),
            crs: Some(crs.into()),
        }
    }

    fn new_layer() -> Schema {
        schema(
            &[
                ("iso", FieldType::Text),
                ("pop", FieldType::Integer),
                ("name", FieldType::Text),
                ("added_later", FieldType::Text),
                (GEOM, FieldType::Geometry),
            ],
            "EPSG:4326",
        )
    }

    fn old_layer(crs: &str) -> Schema {
        schema(
            &[
                ("name", FieldType::Text),
                ("pop", FieldType::Double),
                ("iso", FieldType::Text),
                (GEOM, FieldType::Geometry),
            ],
            crs,
        )
    }

    fn lower(params: serde_json::Value, old: &Schema) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: VectorDiff = serde_json::from_value(params).unwrap();
        let new = new_layer();
        let others = [Some(old)];
        let ctx = LowerContext {
            step_id: "d",
            path: "p",
            input: Some(&new),
            others: &others,
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn compares_the_shared_fields_in_the_input_order_then_the_geometry() {
        let old = old_layer("EPSG:4326");
        let ops = lower(json!({"ref_layer": "before", "key": ["iso"]}), &old).unwrap();
        let [Operator::Owned(diff)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        let diff = diff.downcast::<DiffOp>().expect("a Diff");
        let new = new_layer();
        assert_eq!(diff.compared(&new, &old), ["pop", "name"]);
        let output = diff.output_schema(&new, Some(&old));
        let names: Vec<&str> = output.names();
        assert_eq!(
            names,
            ["iso", "pop", "name", "added_later", GEOM, "change", "changed_fields"]
        );
        // An integer in one version and a double in the other: a double.
        assert_eq!(output.columns[1].ty, FieldType::Double);
        let sql = select(
            &ops[0],
            &[
                Input {
                    from: "\"after\"",
                    schema: Some(&new),
                },
                Input {
                    from: "\"before\"",
                    schema: Some(&old),
                },
            ],
            Some(&output),
            Dialect::Postgis,
        )
        .unwrap();
        assert!(
            sql.contains("concat_ws(',', CASE WHEN t.\"pop\" IS DISTINCT FROM r.\"pop\" THEN 'pop' END, CASE WHEN t.\"name\" IS DISTINCT FROM r.\"name\" THEN 'name' END, CASE WHEN ST_AsBinary(t.\"geom\") IS DISTINCT FROM ST_AsBinary(r.\"geom\") THEN 'geometry' END)"),
            "{sql}"
        );
        assert!(sql.contains("FULL JOIN"), "{sql}");
        assert!(
            sql.contains("CAST(t.\"pop\" AS DOUBLE PRECISION)"),
            "{sql}"
        );
        assert!(sql.contains("CAST('geomill: vector_diff: key (iso) = '"), "{sql}");
    }

    #[test]
    fn hausdorff_keeps_every_key_and_lets_the_last_row_stand() {
        let old = old_layer("EPSG:4326");
        let params = json!({"ref_layer": "before", "key": ["iso"], "fields": [],
            "compare_geometry": "hausdorff", "tolerance": 0.5, "keep": "all",
            "duplicate_keys": "last"});
        let ops = lower(params, &old).unwrap();
        let [Operator::Owned(diff)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        let diff = diff.downcast::<DiffOp>().expect("a Diff");
        let new = new_layer();
        assert!(diff.compared(&new, &old).is_empty(), "fields: [] compares none");
        let output = diff.output_schema(&new, Some(&old));
        for dialect in Dialect::ALL {
            let inputs = [
                Input {
                    from: "\"after\"",
                    schema: Some(&new),
                },
                Input {
                    from: "\"before\"",
                    schema: Some(&old),
                },
            ];
            let sql = select(&ops[0], &inputs, Some(&output), dialect).unwrap();
            assert!(sql.contains(" > 0.5 END"), "{sql}");
            assert!(
                sql.contains("CASE WHEN d.\"changed_fields\" = '' THEN 'unchanged'"),
                "{sql}"
            );
            assert!(!sql.contains("each key must name one row"), "{sql}");
            assert!(sql.contains("ORDER BY \"__geomill_position\" DESC"), "{sql}");
            let hausdorff = match dialect {
                Dialect::Postgis => "ST_HausdorffDistance(t.\"geom\", r.\"geom\")",
                Dialect::Duckdb => "greatest(list_max(list_transform(ST_Dump(ST_Points(t.\"geom\"))",
            };
            assert!(sql.contains(hausdorff), "{sql}");
        }
        let problems = lower(
            json!({"ref_layer": "before", "key": ["iso"], "compare_geometry": "hausdorff"}),
            &old,
        )
        .unwrap_err();
        assert_eq!(problems[0].message, "is required with compare_geometry: hausdorff");
        let problems =
            lower(json!({"ref_layer": "before", "key": ["iso"], "tolerance": 1}), &old).unwrap_err();
        assert_eq!(problems[0].message, "is read only with compare_geometry: hausdorff");
    }

    #[test]
    fn reports_every_problem() {
        let old = old_layer("EPSG:3857");
        let problems = lower(
            json!({"ref_layer": "before", "key": ["iso", "code"], "fields": ["iso", "added_later"],
                   "change_field": "name"}),
            &old,
        )
        .unwrap_err();
        let messages: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        let text = messages.join("\n");
        assert!(text.contains("p.change_field: the input already has a field \"name\""), "{text}");
        assert!(text.contains("p.fields: iso is a key"), "{text}");
        assert!(text.contains("p.fields: unknown column(s) added_later"), "{text}");
        assert!(text.contains("p.ref_layer: is in EPSG:3857 but the input is in EPSG:4326"), "{text}");
        assert!(text.contains("p.key: unknown column(s) code"), "{text}");
    }
}
