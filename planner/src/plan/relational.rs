//! The operators of attribute work across rows and layers: joins on key fields (and on time),
//! pivots, unpivots, per-field summaries and the comparison of two versions of a layer.

use serde::{Deserialize, Serialize};

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
/// input's time `left` (any distance when `None`), on the side `direction` allows.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeMatch {
    pub left: String,
    pub right: String,
    pub tolerance_seconds: Option<f64>,
    pub direction: TimeDirection,
    /// Only the match nearest in time (equal distances: the earlier time, then the second
    /// input's geometry's WKB hash); otherwise every match.
    pub nearest: bool,
}

/// Which side of a row's time another row's time may lie on (either end included).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TimeDirection {
    /// Before or after.
    #[default]
    Both,
    /// At or before (pandas' `merge_asof` `backward`).
    Backward,
    /// At or after (`forward`).
    Forward,
}

impl TimeDirection {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Both => "both",
            Self::Backward => "backward",
            Self::Forward => "forward",
        }
    }
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
    /// row with a NULL geometry and index. `row_index`, when set, numbers the output rows from
    /// 1 over the whole layer, in order.
    Explode {
        kind: ExplodeKind,
        index: String,
        row_index: Option<String>,
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
    /// Every pair of consecutive coordinates of the geometry read as one chain (its parts and
    /// rings one after the other, as GeoPandas' `get_coordinates` lists them), as a two-point
    /// line: the segments, plus one from each part or ring's last vertex to the next one's
    /// first (of length zero where they meet).
    ChainSegments,
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
            Self::ChainSegments => "chain_segments",
            Self::Holes => "holes",
        }
    }
}

/// Rows to columns: one row per distinct `index`, a column per value of `columns` (listed, or
/// found in the data) holding `func(values)` over that group's rows with that value.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotOp {
    pub index: Vec<String>,
    pub columns: String,
    pub values: String,
    pub func: PivotFunc,
    /// (the value of `columns`, as an SQL literal; its output column) for each listed value;
    /// `None`: every value found in the data, sorted, each column named `prefix` and the value
    /// (computed by the native kernel: SQL fixes a query's columns before reading the data).
    pub outputs: Option<Vec<(String, String)>>,
    pub prefix: String,
    /// The value of a cell without one (no row of that group and value, or a NULL aggregate).
    pub fill: Option<serde_json::Value>,
    pub geometry: PivotGeometry,
}

/// The most columns a pivot whose values come from the data makes.
pub const MAX_PIVOT_FOUND_COLUMNS: usize = 1_000;

/// How a pivot cell aggregates its rows' values (NULLs left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PivotFunc {
    Count,
    Sum,
    Avg,
    Mean,
    Min,
    Max,
    /// The first value in the layer's order.
    First,
    /// The last value in the layer's order.
    Last,
    /// The middle value (the mean of the two middle ones for an even count).
    Median,
}

impl PivotFunc {
    /// The SQL aggregate, when one computes it (the one `dissolve` and the others use).
    pub fn sql(self) -> Option<&'static str> {
        let func = match self {
            Self::Count => AggFunc::Count,
            Self::Sum => AggFunc::Sum,
            Self::Avg => AggFunc::Avg,
            Self::Mean => AggFunc::Mean,
            Self::Min => AggFunc::Min,
            Self::Max => AggFunc::Max,
            Self::First | Self::Last | Self::Median => return None,
        };
        Some(func.sql())
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Sum => "sum",
            Self::Avg => "avg",
            Self::Mean => "mean",
            Self::Min => "min",
            Self::Max => "max",
            Self::First => "first",
            Self::Last => "last",
            Self::Median => "median",
        }
    }
}

/// Which of a pivot group's geometries its row keeps.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PivotGeometry {
    /// The one whose WKB hashes lowest (MD5; NULL geometries last): alike on every engine.
    #[default]
    Hash,
    /// The group's first row's, in the layer's order (NULL when that row has none).
    First,
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

    /// The output schema, given the input's (`None` for a pivot whose columns come from the
    /// data).
    pub fn output_schema(&self, input: &Schema) -> Option<Schema> {
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
                    PivotFunc::Count => FieldType::Integer,
                    PivotFunc::Avg | PivotFunc::Mean | PivotFunc::Median => FieldType::Double,
                    _ => type_of(Some(input), &p.values),
                };
                // Columns found in the data are known only when the step runs.
                columns.extend(p.outputs.as_ref()?.iter().map(|(_, name)| column(name, ty)));
                if input.has(GEOM) {
                    columns.push(column(GEOM, FieldType::Geometry));
                }
                Some(Schema {
                    columns,
                    crs: input.crs.clone(),
                })
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
                Some(schema)
            }
            Self::Explode {
                index, row_index, ..
            } => {
                let mut schema = input.clone();
                schema.set(index, FieldType::Integer);
                if let Some(row_index) = row_index {
                    schema.set(row_index, FieldType::Integer);
                }
                Some(schema)
            }
            Self::Describe { .. } => Some(Schema {
                columns: DESCRIBE_COLUMNS
                    .iter()
                    .map(|(name, ty)| column(name, *ty))
                    .collect(),
                crs: None,
            }),
        }
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        match self {
            Self::Pivot(p) => {
                let outputs = match &p.outputs {
                    Some(outputs) => outputs
                        .iter()
                        .map(|(_, name)| name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    None => format!("{}<each value found>", p.prefix),
                };
                let mut text = format!(
                    "pivot index=[{}] columns={} values={}({}) outputs=[{outputs}]",
                    p.index.join(", "),
                    p.columns,
                    p.func.as_str(),
                    p.values,
                );
                if let Some(fill) = &p.fill {
                    text.push_str(&format!(" fill={fill}"));
                }
                if p.geometry == PivotGeometry::First {
                    text.push_str(" geometry=first");
                }
                text
            }
            Self::Unpivot(u) => format!(
                "unpivot fields=[{}] name_field={} value_field={}",
                u.fields.join(", "),
                u.name_field,
                u.value_field
            ),
            Self::Describe { fields } if fields.is_empty() => "describe fields=all".to_owned(),
            Self::Describe { fields } => format!("describe fields=[{}]", fields.join(", ")),
            Self::Explode {
                kind,
                index,
                row_index,
            } => match row_index {
                Some(row_index) => format!(
                    "explode {} index={index} row_index={row_index}",
                    kind.name()
                ),
                None => format!("explode {} index={index}", kind.name()),
            },
        }
    }
}
