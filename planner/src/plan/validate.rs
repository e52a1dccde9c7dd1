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
/// The summary's column counting the problems of a kind.
pub const COUNT: &str = "count";

/// Report the problems `check` finds, each with the feature's `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidateOp {
    /// The field identifying features in the report.
    pub key: String,
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
    },
    /// Features whose geometry equals another's (normalised) or, with a `tolerance`, lies
    /// within it of another's (discrete Hausdorff distance).
    Duplicates { tolerance: f64 },
    /// Values breaking rules, field by field.
    Attributes { rules: Vec<AttributeRule> },
    /// What the input lacks against a reference layer (the operator's second input).
    Completeness(Completeness),
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

/// One allowed value of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum AllowedValue {
    Number(f64),
    Text(String),
}

impl ValidateOp {
    /// The input columns the operator names.
    pub fn reads(&self) -> Vec<String> {
        let mut names = vec![self.key.clone(), GEOM.to_owned()];
        match &self.check {
            ValidateCheck::Attributes { rules } => {
                names.extend(rules.iter().map(|r| r.field.clone()));
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
        input
            .and_then(|s| s.columns.iter().find(|c| c.name == self.key))
            .map_or(FieldType::Unknown, |c| c.ty)
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
        Schema {
            columns: vec![
                column(FEATURE, key),
                column(RELATED, self.related_type(input, other)),
                column(PROBLEM, FieldType::Text),
                column(FIELD, FieldType::Text),
                column(REASON, FieldType::Text),
                column(GEOM, FieldType::Geometry),
            ],
            crs: input.and_then(|s| s.crs.clone()),
        }
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        let check = match &self.check {
            ValidateCheck::Topology { checks, tolerance } => format!(
                "topology [{}] tolerance={tolerance}",
                checks
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ValidateCheck::Duplicates { tolerance } => format!("duplicates tolerance={tolerance}"),
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
        format!(
            "{check} key={}{}",
            self.key,
            if self.summary { " summary" } else { "" }
        )
    }
}
