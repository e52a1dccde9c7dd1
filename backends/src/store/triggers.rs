//! The trigger catalog of the embedded engine (`meta.triggers`): each trigger kept as its JSON
//! document (with its operations), with its id, name and enabled flag as columns.

use duckdb::{Row, ToSql};

use super::repository::CatalogRow;

/// A trigger as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerRecord {
    pub id: String,
    pub name: String,
    pub enabled: bool,
    /// The trigger's fields (event, predicates, actions, operations, ...) as JSON text.
    pub document: String,
    pub created_at: String,
    pub updated_at: String,
}

impl CatalogRow for TriggerRecord {
    const TABLE: &'static str = "meta.triggers";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "name",
        "enabled",
        "document",
        "created_at",
        "updated_at",
    ];

    fn from_row(r: &Row<'_>) -> Result<Self, duckdb::Error> {
        Ok(TriggerRecord {
            id: r.get(0)?,
            name: r.get(1)?,
            enabled: r.get(2)?,
            document: r.get(3)?,
            created_at: r.get(4)?,
            updated_at: r.get(5)?,
        })
    }

    fn values(&self) -> Vec<&dyn ToSql> {
        vec![
            &self.id,
            &self.name,
            &self.enabled,
            &self.document,
            &self.created_at,
            &self.updated_at,
        ]
    }
}
