//! The rule catalog of the embedded engine (`meta.rules`): stored rules that jobs name by id.

use duckdb::Row;
use serde::Serialize;

use super::Store;
use super::datasets::query_error;
use crate::BackendError;

pub(super) const RULES_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.rules (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    capability VARCHAR NOT NULL,
    config VARCHAR NOT NULL,
    config_key VARCHAR NOT NULL,
    scope VARCHAR,
    enabled BOOLEAN,
    created_at VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL
);";

const COLUMNS: &str =
    "id, name, capability, config, config_key, scope, enabled, created_at, updated_at";

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

fn from_row(r: &Row<'_>) -> Result<RuleRecord, duckdb::Error> {
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

impl Store {
    /// Stores a rule, replacing the one with the same id.
    pub fn put_rule(&self, rule: &RuleRecord) -> Result<(), BackendError> {
        let sql = format!(
            "INSERT OR REPLACE INTO meta.rules ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        self.connection()?
            .execute(
                &sql,
                duckdb::params![
                    rule.id,
                    rule.name,
                    rule.capability,
                    rule.config,
                    rule.config_key,
                    rule.scope,
                    rule.enabled,
                    rule.created_at,
                    rule.updated_at
                ],
            )
            .map_err(query_error(&sql))?;
        Ok(())
    }

    /// One rule.
    pub fn rule(&self, id: &str) -> Result<Option<RuleRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.rules WHERE id = ?");
        match self.connection()?.query_row(&sql, [id], from_row) {
            Ok(rule) => Ok(Some(rule)),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(query_error(&sql)(e)),
        }
    }

    /// Every rule, oldest first.
    pub fn rules(&self) -> Result<Vec<RuleRecord>, BackendError> {
        let sql = format!("SELECT {COLUMNS} FROM meta.rules ORDER BY created_at, id");
        let connection = self.connection()?;
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let rules = statement
            .query_map([], from_row)
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok(rules)
    }

    /// Deletes a rule; `false` when there was none.
    pub fn delete_rule(&self, id: &str) -> Result<bool, BackendError> {
        let sql = "DELETE FROM meta.rules WHERE id = ?";
        let changed = self
            .connection()?
            .execute(sql, [id])
            .map_err(query_error(sql))?;
        Ok(changed > 0)
    }
}
