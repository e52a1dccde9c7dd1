//! The scenario catalog of the embedded engine (`meta.scenarios`): named groups of jobs (the
//! nodes, as JSON) run together.

use duckdb::Row;
use serde::Serialize;

use super::Store;
use crate::BackendError;
use crate::duckdb::query_error;

/// A scenario as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioRecord {
    pub id: String,
    pub name: String,
    /// `sequential` or `independent`: the default mode of a run.
    pub mode: String,
    /// The nodes (JSON array text): `{id, job}` each.
    pub nodes: String,
    pub created_at: String,
}

fn from_row(r: &Row<'_>) -> Result<ScenarioRecord, duckdb::Error> {
    Ok(ScenarioRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        mode: r.get(2)?,
        nodes: r.get(3)?,
        created_at: r.get(4)?,
    })
}

impl Store {
    /// Stores a new scenario.
    pub fn insert_scenario(&self, s: &ScenarioRecord) -> Result<(), BackendError> {
        let sql =
            "INSERT INTO meta.scenarios (id, name, mode, nodes, created_at) VALUES (?, ?, ?, ?, ?)";
        self.connection()?
            .execute(
                sql,
                duckdb::params![s.id, s.name, s.mode, s.nodes, s.created_at],
            )
            .map_err(query_error(sql))?;
        Ok(())
    }

    /// Scenarios, oldest first: one (`Some(id)`) or all.
    pub fn scenarios(&self, id: Option<&str>) -> Result<Vec<ScenarioRecord>, BackendError> {
        let sql = "SELECT id, name, mode, nodes, created_at FROM meta.scenarios \
                   WHERE ? IS NULL OR id = ? ORDER BY created_at, id";
        let connection = self.connection()?;
        let mut statement = connection.prepare(sql).map_err(query_error(sql))?;
        let found = statement
            .query_map([id, id], from_row)
            .map_err(query_error(sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(sql))?;
        Ok(found)
    }
}
