//! `Diff`: the rows added, removed or changed between two versions of a layer, matched by key
//! (`vector_diff`). SQL on both dialects (`sql.rs`); no kernel.

mod sql;

use serde::{Deserialize, Serialize};

use crate::plan::owned::{OwnedOperator, first_schema};
use crate::plan::relational::{JoinKey, common_type};
use crate::schema::{FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;

/// The rows that differ between two versions of a layer, matched by key: the first input is
/// the new version, the second the old one. One row per key added (only in the new version),
/// removed (only in the old) or changed (compared fields or geometry differ), and with
/// `keep_unchanged` unchanged, with the new row's values (the old row's for a removed key) and
/// what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffOp {
    /// Key pairs (new layer's field, old layer's field) matched for equality; NULL keys match
    /// nothing.
    pub keys: Vec<JoinKey>,
    /// Attributes compared; `None`: every attribute both versions have, keys aside.
    pub fields: Option<Vec<String>>,
    pub geometry: GeometryCompare,
    /// [`GeometryCompare::Hausdorff`]'s threshold, in CRS units.
    pub tolerance: f64,
    /// Also the keys whose rows are equal (`unchanged`, no changed fields).
    pub keep_unchanged: bool,
    /// What a key on several rows of a layer means.
    pub duplicates: DuplicateKeys,
    /// Receives `added`, `removed`, `changed` (or `unchanged`).
    pub change_field: String,
    /// Receives the names of the changed fields of a changed row, comma-separated.
    pub changed_fields_field: String,
}

/// How two versions of a feature's geometry are compared.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum GeometryCompare {
    /// Equal well-known binary: the same type, vertices in the same order, same coordinates.
    #[default]
    Exact,
    /// Equal after GEOS normalisation (`ST_Normalize`): any start vertex, ring orientation or
    /// order of parts.
    Normalized,
    /// Changed when the Hausdorff distance between the versions exceeds the diff's tolerance
    /// (CRS units): a vertex moved less, or added on a side, is no change.
    Hausdorff,
    /// The geometry is not compared.
    Ignore,
}

impl GeometryCompare {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Normalized => "normalized",
            Self::Hausdorff => "hausdorff",
            Self::Ignore => "ignore",
        }
    }
}

/// What a key found on several rows of one layer means to a diff.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DuplicateKeys {
    /// The run fails, naming the key.
    #[default]
    Fail,
    /// The layer's last row of that key (in the layer's order) stands for it.
    Last,
}

/// The type of a column both versions have: the new one's, or the type both fit when they
/// differ (known on both sides).
pub fn merged_type(new: FieldType, old: FieldType) -> FieldType {
    if new == old || new == FieldType::Unknown || old == FieldType::Unknown {
        new
    } else {
        common_type(&[new, old])
    }
}

impl DiffOp {
    /// The columns the comparison names, on either input.
    pub fn reads(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for key in &self.keys {
            names.push(key.left.clone());
            names.push(key.right.clone());
        }
        names.extend(self.fields.iter().flatten().cloned());
        names
    }

    /// The attributes compared, in the new version's order.
    pub fn compared(&self, new: &Schema, old: &Schema) -> Vec<String> {
        new.attributes()
            .map(|c| c.name.clone())
            .filter(|name| !self.keys.iter().any(|k| &k.left == name))
            .filter(|name| match &self.fields {
                None => old.has(name),
                Some(fields) => fields.contains(name),
            })
            .collect()
    }

    /// Whether geometries are compared: asked, and both versions have one.
    pub fn compares_geometry(&self, new: &Schema, old: &Schema) -> bool {
        self.geometry != GeometryCompare::Ignore && new.has(GEOM) && old.has(GEOM)
    }

    /// The new version's columns (typed to fit the old values too), then the change fields.
    pub fn output_schema(&self, new: &Schema, old: Option<&Schema>) -> Schema {
        let mut schema = new.clone();
        for column in &mut schema.columns {
            if let Some(old) = old.and_then(|o| o.columns.iter().find(|c| c.name == column.name)) {
                column.ty = merged_type(column.ty, old.ty);
            }
        }
        schema.set(&self.change_field, FieldType::Text);
        schema.set(&self.changed_fields_field, FieldType::Text);
        schema
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| {
                format!(
                    "{}={}{}",
                    k.left,
                    k.right,
                    if k.as_text { " as text" } else { "" }
                )
            })
            .collect();
        let fields = match &self.fields {
            None => "shared".to_owned(),
            Some(fields) => format!("[{}]", fields.join(", ")),
        };
        let geometry = match self.geometry {
            GeometryCompare::Hausdorff => format!("hausdorff>{}", self.tolerance),
            other => other.as_str().to_owned(),
        };
        let mut text = format!(
            "key=[{}] fields={fields} geometry={geometry} change_field={} changed_fields_field={}",
            keys.join(", "),
            self.change_field,
            self.changed_fields_field
        );
        if self.keep_unchanged {
            text.push_str(" keep=all");
        }
        if self.duplicates == DuplicateKeys::Last {
            text.push_str(" duplicate_keys=last");
        }
        text
    }
}

impl OwnedOperator for DiffOp {
    fn name(&self) -> &'static str {
        "Diff"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        DiffOp::reads(self)
    }

    fn arity(&self) -> Option<usize> {
        Some(2)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        let new = first_schema(inputs)?;
        let old = inputs.get(1).copied().flatten();
        Some(DiffOp::output_schema(self, new, old))
    }

    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        let [new, old] = inputs else {
            return Err("Diff needs two inputs".to_owned());
        };
        sql::diff_sql(self, *new, *old, dialect)
    }
}
