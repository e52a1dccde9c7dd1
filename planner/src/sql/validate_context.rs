//! What every validation check's SQL is written with: the context (input, key, dialect) and
//! one problem row's values, shared by `validate`, `validate_completeness` and
//! `validate_topology`.

use super::dialect::Dialect;
use super::parts::Input;
use super::quote::{ident, string};
use crate::plan::validate::{FEATURE, FIELD, PROBLEM, REASON, RELATED};
use crate::schema::{FieldType, GEOM};

/// One problem row's values, as SQL expressions.
pub(super) struct ProblemRow<'a> {
    pub feature: String,
    pub related: String,
    pub problem: &'a str,
    pub field: Option<&'a str>,
    pub reason: String,
    pub geom: String,
}

impl ProblemRow<'_> {
    /// `SELECT <the row> <rest>` (`rest`: FROM, WHERE, ...).
    pub fn select(&self, rest: &str) -> String {
        format!(
            "SELECT {} AS {}, {} AS {}, {} AS {}, {} AS {}, {} AS {}, {} AS {} {rest}",
            self.feature,
            ident(FEATURE),
            self.related,
            ident(RELATED),
            string(self.problem),
            ident(PROBLEM),
            self.field
                .map_or_else(|| "CAST(NULL AS TEXT)".to_owned(), string),
            ident(FIELD),
            self.reason,
            ident(REASON),
            self.geom,
            ident(GEOM)
        )
    }
}

/// What every check's SQL needs: the input, its key and the dialect.
pub(super) struct Context<'a> {
    pub input: Input<'a>,
    pub key: &'a str,
    pub key_type: FieldType,
    pub dialect: Dialect,
}

impl Context<'_> {
    /// The key of the row `q` (a table alias).
    pub fn key_of(&self, q: &str) -> String {
        format!("{q}.{}", ident(self.key))
    }

    /// A NULL of the key's type (read from the input when the type is not known).
    pub fn null_key(&self) -> String {
        match self.key_type {
            FieldType::Unknown => format!(
                "(SELECT n.{} FROM {} AS n WHERE FALSE LIMIT 1)",
                ident(self.key),
                self.input.from
            ),
            ty => format!("CAST(NULL AS {})", ty.sql()),
        }
    }

    /// The geometry of the row `q`.
    pub fn geom_of(&self, q: &str) -> String {
        format!("{q}.{}", ident(GEOM))
    }
}

/// A NULL geometry.
pub(super) const NULL_GEOMETRY: &str = "CAST(NULL AS GEOMETRY)";
