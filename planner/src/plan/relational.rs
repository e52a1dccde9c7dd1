//! The operators of attribute work across rows and layers: joins on key fields (and on time),
//! pivots, unpivots, per-field summaries and the comparison of two versions of a layer.

use super::operator::{AggFunc, JoinHow};
use crate::schema::{Column, FieldType, GEOM, Schema};

/// Join the second input's attributes to the first input's rows where key fields are equal
/// (and, with `time`, where times are close). The second input's geometry is never brought.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinOp {
    pub how: JoinHow,
    /// Key pairs compared for equality (all must hold); NULL keys match nothing.
    pub on: Vec<JoinKey>,
    /// Columns of the second input to bring, as (its name, wanted output name); empty: every
    /// attribute of the second input except its keys named as the first input's keys.
    pub columns: Vec<(String, String)>,
    /// Appended to an output name the first input (or an earlier brought column) already has,
    /// until it is free.
    pub suffix: String,
    /// Also match on time.
    pub time: Option<TimeMatch>,
}

/// `left = right`, on the first and second inputs' columns.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinKey {
    pub left: String,
    pub right: String,
    /// Compare both sides as text (an integer key against a text key).
    pub as_text: bool,
}

/// Rows of the second input whose time `right` is within `tolerance_seconds` of the first
/// input's time `left`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeMatch {
    pub left: String,
    pub right: String,
    pub tolerance_seconds: f64,
    /// Only the match nearest in time (ties broken by the second input's geometry's WKB hash);
    /// otherwise every match.
    pub nearest: bool,
}

impl JoinOp {
    /// The columns the join names, on either input.
    pub fn reads(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for key in &self.on {
            names.push(key.left.clone());
            names.push(key.right.clone());
        }
        names.extend(self.columns.iter().map(|(name, _)| name.clone()));
        if let Some(time) = &self.time {
            names.push(time.left.clone());
            names.push(time.right.clone());
        }
        names
    }

    /// The columns brought from the second input, as (its name, output name): `None` when
    /// none were requested and the second input's columns are not known.
    pub fn brought(
        &self,
        left: Option<&Schema>,
        right: Option<&Schema>,
    ) -> Option<Vec<(String, String)>> {
        let wanted: Vec<(String, String)> = if self.columns.is_empty() {
            right?
                .attributes()
                .filter(|c| {
                    !self
                        .on
                        .iter()
                        .any(|k| k.right == c.name && k.left == c.name)
                })
                .map(|c| (c.name.clone(), c.name.clone()))
                .collect()
        } else {
            self.columns.clone()
        };
        let mut taken: Vec<String> = left
            .map(|l| l.names().into_iter().map(str::to_owned).collect())
            .unwrap_or_default();
        let mut out = Vec::new();
        for (name, mut output) in wanted {
            while taken.contains(&output) {
                output.push_str(&self.suffix);
            }
            taken.push(output.clone());
            out.push((name, output));
        }
        Some(out)
    }
}

/// Reshaping a layer's rows: its output is a new table made from the input.
#[derive(Debug, Clone, PartialEq)]
pub enum ReshapeOp {
    Pivot(PivotOp),
    Unpivot(UnpivotOp),
    /// One row per field (`fields`, or every attribute when empty) summarising its values;
    /// no geometry.
    Describe {
        fields: Vec<String>,
    },
    /// One row per piece of each geometry (see [`ExplodeKind`]), numbered from 1 in `index`;
    /// the attributes repeated. A NULL or empty geometry, or one without such pieces, gives one
    /// row with a NULL geometry and index.
    Explode {
        kind: ExplodeKind,
        index: String,
    },
}

/// The pieces `Explode` makes rows of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplodeKind {
    /// The simple parts (collections and multi-geometries taken apart, nested ones too).
    Parts,
    /// Every vertex, as a point.
    Vertices,
    /// Every segment of the lines and rings, as a two-point line.
    Segments,
    /// Every hole of the polygons, as a polygon.
    Holes,
}

impl ExplodeKind {
    /// The kind in EXPLAIN text.
    pub fn name(self) -> &'static str {
        match self {
            Self::Parts => "parts",
            Self::Vertices => "vertices",
            Self::Segments => "segments",
            Self::Holes => "holes",
        }
    }
}

/// Rows to columns: one row per distinct `index`, a column per listed value of `columns`
/// holding `func(values)` over that group's rows with that value.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotOp {
    pub index: Vec<String>,
    pub columns: String,
    pub values: String,
    pub func: AggFunc,
    /// (the value of `columns`, as an SQL literal; its output column).
    pub outputs: Vec<(String, String)>,
}

/// Columns to rows: each row repeated once per field of `fields`, with the field's name in
/// `name_field` and its value in `value_field`; the other columns (and the geometry) repeated.
#[derive(Debug, Clone, PartialEq)]
pub struct UnpivotOp {
    pub fields: Vec<String>,
    pub name_field: String,
    pub value_field: String,
}

/// The columns of a describe table, with their types.
pub const DESCRIBE_COLUMNS: [(&str, FieldType); 9] = [
    ("field", FieldType::Text),
    ("type", FieldType::Text),
    ("count", FieldType::Integer),
    ("nulls", FieldType::Integer),
    ("distinct", FieldType::Integer),
    ("min", FieldType::Double),
    ("max", FieldType::Double),
    ("mean", FieldType::Double),
    ("stddev", FieldType::Double),
];

fn type_of(schema: Option<&Schema>, name: &str) -> FieldType {
    schema
        .and_then(|s| s.columns.iter().find(|c| c.name == name))
        .map_or(FieldType::Unknown, |c| c.ty)
}

/// The type all of `types` fit: the common one, a double for a mix of numbers, else text.
pub fn common_type(types: &[FieldType]) -> FieldType {
    match types.first() {
        Some(first) if types.iter().all(|t| t == first) => *first,
        Some(_)
            if types
                .iter()
                .all(|t| matches!(t, FieldType::Integer | FieldType::Double)) =>
        {
            FieldType::Double
        }
        _ => FieldType::Text,
    }
}

impl ReshapeOp {
    /// The input columns the operator names.
    pub fn reads(&self) -> Vec<String> {
        match self {
            Self::Pivot(p) => p
                .index
                .iter()
                .cloned()
                .chain([p.columns.clone(), p.values.clone()])
                .collect(),
            Self::Unpivot(u) => u.fields.clone(),
            Self::Describe { fields } => fields.clone(),
            Self::Explode { .. } => Vec::new(),
        }
    }

    /// The fields `Describe` summarises: the given ones, or every attribute of the input.
    pub fn described<'a>(fields: &'a [String], input: Option<&'a Schema>) -> Option<Vec<String>> {
        if fields.is_empty() {
            Some(input?.attributes().map(|c| c.name.clone()).collect())
        } else {
            Some(fields.to_vec())
        }
    }

    /// The output schema, given the input's.
    pub fn output_schema(&self, input: &Schema) -> Schema {
        let column = |name: &str, ty: FieldType| Column {
            name: name.to_owned(),
            ty,
        };
        match self {
            Self::Pivot(p) => {
                let mut columns: Vec<Column> = p
                    .index
                    .iter()
                    .map(|name| column(name, type_of(Some(input), name)))
                    .collect();
                let ty = match p.func {
                    AggFunc::Count => FieldType::Integer,
                    AggFunc::Avg | AggFunc::Mean => FieldType::Double,
                    _ => type_of(Some(input), &p.values),
                };
                columns.extend(p.outputs.iter().map(|(_, name)| column(name, ty)));
                if input.has(GEOM) {
                    columns.push(column(GEOM, FieldType::Geometry));
                }
                Schema {
                    columns,
                    crs: input.crs.clone(),
                }
            }
            Self::Unpivot(u) => {
                let types: Vec<FieldType> =
                    u.fields.iter().map(|f| type_of(Some(input), f)).collect();
                let mut schema = input.clone();
                for field in &u.fields {
                    schema.remove(field);
                }
                schema.set(&u.name_field, FieldType::Text);
                schema.set(&u.value_field, common_type(&types));
                schema
            }
            Self::Explode { index, .. } => {
                let mut schema = input.clone();
                schema.set(index, FieldType::Integer);
                schema
            }
            Self::Describe { .. } => Schema {
                columns: DESCRIBE_COLUMNS
                    .iter()
                    .map(|(name, ty)| column(name, *ty))
                    .collect(),
                crs: None,
            },
        }
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        match self {
            Self::Pivot(p) => format!(
                "pivot index=[{}] columns={} values={}({}) outputs=[{}]",
                p.index.join(", "),
                p.columns,
                p.func.sql(),
                p.values,
                p.outputs
                    .iter()
                    .map(|(_, name)| name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::Unpivot(u) => format!(
                "unpivot fields=[{}] name_field={} value_field={}",
                u.fields.join(", "),
                u.name_field,
                u.value_field
            ),
            Self::Describe { fields } if fields.is_empty() => "describe fields=all".to_owned(),
            Self::Describe { fields } => format!("describe fields=[{}]", fields.join(", ")),
            Self::Explode { kind, index } => format!("explode {} index={index}", kind.name()),
        }
    }
}
