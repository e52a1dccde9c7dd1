//! The validation operator: a layer of problems found in the input (invalid or overlapping
//! geometries, gaps, dangles, duplicates, attribute values breaking rules), one row per
//! problem, or one row per kind of problem with its count.

use serde::{Deserialize, Serialize};

use crate::schema::{Column, FieldType, GEOM, Schema};

/// The output's column holding the key of the feature a problem is about.
pub const FEATURE: &str = "feature";
/// The output's column holding the key of the other feature of a problem between two.
pub const RELATED: &str = "related";
/// The output's column naming the kind of problem.
pub const PROBLEM: &str = "problem";
/// The output's column naming the field an attribute problem is about.
pub const FIELD: &str = "field";
/// The output's column explaining the problem.
pub const REASON: &str = "reason";
/// The column of Python-rule reports holding the offending value as Python prints it.
pub const VALUE: &str = "value";
/// The summary's column counting the problems of a kind.
pub const COUNT: &str = "count";

/// The column numbering the input's rows from 0 when features are identified by position.
pub const POSITION: &str = "geomill_position";

/// How the report identifies features.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureKey {
    /// By a field's value.
    Field(String),
    /// By the row's 0-based position in the input, in the order it is read.
    Position,
}

impl FeatureKey {
    /// The key's column: the field, or [`POSITION`] numbered onto the input.
    pub fn column(&self) -> &str {
        match self {
            Self::Field(name) => name,
            Self::Position => POSITION,
        }
    }
}

/// Report the problems `check` finds, each with the feature's `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidateOp {
    /// How features are identified in the report.
    pub key: FeatureKey,
    pub check: ValidateCheck,
    /// One row per (problem, field) with its count instead of one row per problem.
    pub summary: bool,
}

/// What is checked.
#[derive(Debug, Clone, PartialEq)]
pub enum ValidateCheck {
    /// Geometries: NULL, empty, invalid (GEOS's reason), lines crossing themselves, polygons
    /// overlapping, gaps between polygons, line ends touching nothing (dangles) or stopping
    /// short of another line within `tolerance` (undershoots).
    Topology {
        checks: Vec<TopologyProblem>,
        tolerance: f64,
        predicates: TopologyPredicates,
    },
    /// Features whose geometry equals another's (normalised) or, with a `tolerance`, lies
    /// within it of another's (discrete Hausdorff distance); or as `rule` says.
    Duplicates {
        tolerance: f64,
        rule: DuplicateMatch,
    },
    /// Values breaking rules, field by field.
    Attributes { rules: Vec<AttributeRule> },
    /// Values breaking rules as a Python script checks them, value by value.
    PythonAttributes { rules: Vec<PythonRule> },
    /// What the input lacks against a reference layer (the operator's second input).
    Completeness(Completeness),
}

/// Which predicates `topology_check` applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyPredicates {
    /// geomill's: invalid geometries located at the point GEOS names, self-intersection of
    /// lines, overlaps of valid polygons' interiors (containment included), the polygonal part
    /// of the intersection.
    Geomill,
    /// Shapely's, as a GeoPandas script applies them: `is_valid` (the whole feature
    /// reported), `is_simple` on every geometry type, `overlaps` between polygons valid or
    /// not (neither containing the other) with their full intersection and its area.
    Shapely,
}

/// Which features `duplicate_geometry` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DuplicateMatch {
    /// Every pair of duplicates, on the lower key; normalised geometry or Hausdorff distance.
    Normalized,
    /// Rows in input order, each duplicate reported once against the first it duplicates:
    /// with no tolerance, the first row whose geometry prints the same well-known text (no
    /// normalisation, empty geometries included); with a tolerance, each row not yet claimed
    /// claims every later unclaimed row within it by minimum distance.
    FirstInRowOrder,
}

/// How the input is checked against the reference layer.
#[derive(Debug, Clone, PartialEq)]
pub enum Completeness {
    /// Reference features whose `ref_key` no input feature has (`missing`), and input features
    /// whose key no reference feature has (`unexpected`); keys compared as text when
    /// `as_text`.
    Keys { ref_key: String, as_text: bool },
    /// The part of each reference feature (named by `ref_key`) that no input feature covers,
    /// when it is at least `min_fraction` of the feature's area (`uncovered`).
    Coverage { ref_key: String, min_fraction: f64 },
}

impl Completeness {
    pub fn ref_key(&self) -> &str {
        match self {
            Self::Keys { ref_key, .. } | Self::Coverage { ref_key, .. } => ref_key,
        }
    }
}

/// A kind of topology problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyProblem {
    /// A NULL geometry.
    NullGeometry,
    /// An empty geometry.
    EmptyGeometry,
    /// An invalid geometry, with GEOS's reason and its location.
    Invalid,
    /// A line that crosses or touches itself (not simple).
    SelfIntersection,
    /// Two polygons whose interiors overlap.
    Overlap,
    /// A hole in the union of the polygons.
    Gap,
    /// A line end that touches no other line.
    Dangle,
}

impl TopologyProblem {
    pub const ALL: [Self; 7] = [
        Self::NullGeometry,
        Self::EmptyGeometry,
        Self::Invalid,
        Self::SelfIntersection,
        Self::Overlap,
        Self::Gap,
        Self::Dangle,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::NullGeometry => "null_geometry",
            Self::EmptyGeometry => "empty_geometry",
            Self::Invalid => "invalid",
            Self::SelfIntersection => "self_intersection",
            Self::Overlap => "overlap",
            Self::Gap => "gap",
            Self::Dangle => "dangle",
        }
    }
}

/// The rules one field's values must follow (every one given is checked).
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeRule {
    pub field: String,
    pub not_null: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub regex: Option<String>,
    pub allowed: Vec<AllowedValue>,
    pub unique: bool,
}

/// The Python class a value must be of, by the names a Python script gives (`int` accepts
/// booleans too, `float` integers and booleans, as Python's `isinstance` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PythonType {
    Int,
    Integer,
    Float,
    Number,
    Str,
    String,
    Bool,
    Boolean,
}

impl PythonType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Int => "int",
            Self::Integer => "integer",
            Self::Float => "float",
            Self::Number => "number",
            Self::Str => "str",
            Self::String => "string",
            Self::Bool => "bool",
            Self::Boolean => "boolean",
        }
    }

    /// Whether a value of Python class `class` (`int`, `float`, `str`, `bool`) is one.
    pub fn accepts(self, class: &str) -> bool {
        match self {
            Self::Int | Self::Integer => matches!(class, "int" | "bool"),
            Self::Float | Self::Number => matches!(class, "float" | "int" | "bool"),
            Self::Str | Self::String => class == "str",
            Self::Bool | Self::Boolean => class == "bool",
        }
    }
}

/// One field's rules as a Python script checks them: NULL (`None`, NaN) breaks only
/// `nullable: false`; a value of another class breaks `type` and nothing else; `min`/`max`
/// bound numbers or a text's length; `pattern` fully matches texts; `allowed` by Python's `in`.
/// Bounds and allowed values keep their JSON form, as the reasons print them.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonRule {
    pub field: String,
    /// The field is not in the input: every feature breaks the rule (`missing_column`).
    pub missing: bool,
    pub class: Option<PythonType>,
    pub nullable: bool,
    pub min: Option<serde_json::Number>,
    pub max: Option<serde_json::Number>,
    pub pattern: Option<String>,
    pub allowed: Option<Vec<serde_json::Value>>,
}

/// One allowed value of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum AllowedValue {
    Number(f64),
    Text(String),
}

impl ValidateOp {
    /// Whether only the native backend computes the check (input order, Shapely's predicates).
    pub fn native_only(&self) -> bool {
        matches!(
            self.check,
            ValidateCheck::PythonAttributes { .. }
                | ValidateCheck::Topology {
                    predicates: TopologyPredicates::Shapely,
                    ..
                }
                | ValidateCheck::Duplicates {
                    rule: DuplicateMatch::FirstInRowOrder,
                    ..
                }
        )
    }

    /// The input columns the operator names.
    pub fn reads(&self) -> Vec<String> {
        let mut names = vec![GEOM.to_owned()];
        if let FeatureKey::Field(key) = &self.key {
            names.push(key.clone());
        }
        match &self.check {
            ValidateCheck::Attributes { rules } => {
                names.extend(rules.iter().map(|r| r.field.clone()));
            }
            ValidateCheck::PythonAttributes { rules } => {
                names.extend(rules.iter().filter(|r| !r.missing).map(|r| r.field.clone()));
            }
            ValidateCheck::Completeness(c) => names.push(c.ref_key().to_owned()),
            _ => {}
        }
        names
    }

    /// How many inputs the operator takes: the reference layer too for completeness.
    pub fn arity(&self) -> usize {
        if matches!(self.check, ValidateCheck::Completeness(_)) {
            2
        } else {
            1
        }
    }

    /// The type of the `related` column: the reference layer's key for completeness, else
    /// the input's key.
    pub fn related_type(&self, input: Option<&Schema>, other: Option<&Schema>) -> FieldType {
        match &self.check {
            ValidateCheck::Completeness(c) => other
                .and_then(|s| s.columns.iter().find(|col| col.name == c.ref_key()))
                .map_or(FieldType::Unknown, |col| col.ty),
            _ => self.key_type(input),
        }
    }

    /// The key's type in `input` (unknown without its schema).
    pub fn key_type(&self, input: Option<&Schema>) -> FieldType {
        match &self.key {
            FeatureKey::Field(key) => input
                .and_then(|s| s.columns.iter().find(|c| &c.name == key))
                .map_or(FieldType::Unknown, |c| c.ty),
            FeatureKey::Position => FieldType::Integer,
        }
    }

    /// The report's columns: the problems, or their counts.
    pub fn output_schema(&self, input: Option<&Schema>, other: Option<&Schema>) -> Schema {
        let column = |name: &str, ty: FieldType| Column {
            name: name.to_owned(),
            ty,
        };
        if self.summary {
            return Schema {
                columns: vec![
                    column(PROBLEM, FieldType::Text),
                    column(FIELD, FieldType::Text),
                    column(COUNT, FieldType::Integer),
                ],
                crs: None,
            };
        }
        let key = self.key_type(input);
        let mut columns = vec![
            column(FEATURE, key),
            column(RELATED, self.related_type(input, other)),
            column(PROBLEM, FieldType::Text),
            column(FIELD, FieldType::Text),
        ];
        if matches!(self.check, ValidateCheck::PythonAttributes { .. }) {
            columns.push(column(VALUE, FieldType::Text));
        }
        columns.push(column(REASON, FieldType::Text));
        columns.push(column(GEOM, FieldType::Geometry));
        Schema {
            columns,
            crs: input.and_then(|s| s.crs.clone()),
        }
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        let check = match &self.check {
            ValidateCheck::Topology {
                checks,
                tolerance,
                predicates,
            } => format!(
                "topology [{}] tolerance={tolerance}{}",
                checks
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                match predicates {
                    TopologyPredicates::Geomill => "",
                    TopologyPredicates::Shapely => " predicates=shapely",
                }
            ),
            ValidateCheck::Duplicates { tolerance, rule } => format!(
                "duplicates tolerance={tolerance}{}",
                match rule {
                    DuplicateMatch::Normalized => "",
                    DuplicateMatch::FirstInRowOrder => " rule=first_in_row_order",
                }
            ),
            ValidateCheck::PythonAttributes { rules } => format!(
                "attributes as Python checks them [{}]",
                rules
                    .iter()
                    .map(|r| r.field.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ValidateCheck::Attributes { rules } => format!(
                "attributes [{}]",
                rules
                    .iter()
                    .map(|r| r.field.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ValidateCheck::Completeness(Completeness::Keys { ref_key, as_text }) => format!(
                "completeness keys ref_key={ref_key}{}",
                if *as_text { " as text" } else { "" }
            ),
            ValidateCheck::Completeness(Completeness::Coverage {
                ref_key,
                min_fraction,
            }) => format!("completeness coverage ref_key={ref_key} min_fraction={min_fraction}"),
        };
        let key = match &self.key {
            FeatureKey::Field(key) => key.as_str(),
            FeatureKey::Position => "(position)",
        };
        format!(
            "{check} key={key}{}",
            if self.summary { " summary" } else { "" }
        )
    }
}
