//! The trigger catalog of the embedded engine (`meta.triggers`): each trigger kept as its JSON
//! document (with its operations), with its id, name and enabled flag as columns.

use duckdb::Row;

use super::Store;
use super::datasets::query_error;
use crate::BackendError;

pub(super) const TRIGGERS_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.triggers (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    enabled BOOLEAN NOT NULL,
    document VARCHAR NOT NULL,
    created_at VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL
);";

const COLUMNS: &str = "id, name, enabled, document, created_at, updated_at";

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

fn from_row(r: &Row<'_>) -> Result<TriggerRecord, duckdb::Error> {
    Ok(TriggerRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        enabled: r.get(2)?,
        document: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

impl Store {
    /// Stores a trigger, replacing the one with the same id.
    pub fn put_trigger(&self, t: &TriggerRecord) -> Result<(), BackendError> {
        let sql =
            format!("INSERT OR REPLACE INTO meta.triggers ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)");
        self.connection()?
            .execute(
                &sql,
                duckdb::params![
                    t.id,
                    t.name,
                    t.enabled,
                    t.document,
                    t.created_at,
                    t.updated_at
                ],
            )
            .map_err(query_error(&sql))?;
        Ok(())
    }

    /// One trigger.
    pub fn trigger(&self, id: &str) -> Result<Option<TriggerRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.triggers WHERE id = ?");
        match self.connection()?.query_row(&sql, [id], from_row) {
            Ok(trigger) => Ok(Some(trigger)),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(query_error(&sql)(e)),
        }
    }

    /// Every trigger, oldest first.
    pub fn triggers(&self) -> Result<Vec<TriggerRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.triggers ORDER BY created_at, id");
        let connection = self.connection()?;
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let triggers = statement
            .query_map([], from_row)
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok(triggers)
    }

    /// Deletes a trigger; `false` when there was none.
    pub fn delete_trigger(&self, id: &str) -> Result<bool, BackendError> {
        let sql = "DELETE FROM meta.triggers WHERE id = ?";
        let changed = self
            .connection()?
            .execute(sql, [id])
            .map_err(query_error(sql))?;
        Ok(changed > 0)
    }
}
