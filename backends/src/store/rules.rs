//! The rule catalog of the embedded engine (`meta.rules`): stored rules that jobs name by id.

use duckdb::{Row, ToSql};
use serde::Serialize;

use super::repository::CatalogRow;

/// A rule as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRecord {
    pub id: String,
    pub name: String,
    pub capability: String,
    /// The parameters, as a JSON object's text.
    pub config: String,
    /// `config` or `params`: the name the parameters were written under.
    pub config_key: String,
    pub scope: Option<String>,
    pub enabled: Option<bool>,
    pub created_at: String,
    pub updated_at: String,
}

impl CatalogRow for RuleRecord {
    const TABLE: &'static str = "meta.rules";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "name",
        "capability",
        "config",
        "config_key",
        "scope",
        "enabled",
        "created_at",
        "updated_at",
    ];

    fn from_row(r: &Row<'_>) -> Result<Self, duckdb::Error> {
        Ok(RuleRecord {
            id: r.get(0)?,
            name: r.get(1)?,
            capability: r.get(2)?,
            config: r.get(3)?,
            config_key: r.get(4)?,
            scope: r.get(5)?,
            enabled: r.get(6)?,
            created_at: r.get(7)?,
            updated_at: r.get(8)?,
        })
    }

    fn values(&self) -> Vec<&dyn ToSql> {
        vec![
            &self.id,
            &self.name,
            &self.capability,
            &self.config,
            &self.config_key,
            &self.scope,
            &self.enabled,
            &self.created_at,
            &self.updated_at,
        ]
    }
}
