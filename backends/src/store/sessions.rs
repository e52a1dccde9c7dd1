//! Sessions of the embedded engine: each an in-memory database attached to the embedded DuckDB
//! (`session_<id>`), so stored layers copy into it without leaving the process, and detaching
//! it frees its memory.

use geomill_planner::sql::quote::ident;

use super::Store;
use super::datasets::{LayerRecord, query_error};
use crate::BackendError;
use crate::duckdb::{QueryRows, read_with_timeout};

/// The catalog name of session `id`.
fn catalog(id: &str) -> String {
    let compact: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    format!("session_{compact}")
}

impl Store {
    /// Attaches a new, empty in-memory database for session `id`.
    pub fn open_session(&self, id: &str) -> Result<(), BackendError> {
        let sql = format!("ATTACH ':memory:' AS {}", ident(&catalog(id)));
        self.execute_batch(&sql)
    }

    /// Detaches session `id`'s database, freeing its memory.
    pub fn close_session(&self, id: &str) -> Result<(), BackendError> {
        let sql = format!("DETACH DATABASE IF EXISTS {}", ident(&catalog(id)));
        self.execute_batch(&sql)
    }

    /// Copies a stored layer into session `id` as table `name` (replacing it); answers its rows.
    pub fn copy_into_session(
        &self,
        id: &str,
        layer: &LayerRecord,
        name: &str,
    ) -> Result<i64, BackendError> {
        let target = format!("{}.main.{}", ident(&catalog(id)), ident(name));
        let sql = format!(
            "CREATE OR REPLACE TABLE {target} AS {}",
            self.location.layer_rows(&layer.table_name)
        );
        self.execute_batch(&sql)?;
        self.query_i64(&format!("SELECT count(*) FROM {target}"))
    }

    /// The tables of session `id` with their row counts, by name.
    pub fn session_tables(&self, id: &str) -> Result<Vec<(String, i64)>, BackendError> {
        let sql =
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY table_name";
        let names: Vec<String> = {
            let connection = self.connection()?;
            let mut statement = connection.prepare(sql).map_err(query_error(sql))?;
            statement
                .query_map([catalog(id)], |r| r.get(0))
                .map_err(query_error(sql))?
                .collect::<Result<_, _>>()
                .map_err(query_error(sql))?
        };
        names
            .into_iter()
            .map(|name| {
                let count = format!(
                    "SELECT count(*) FROM {}.main.{}",
                    ident(&catalog(id)),
                    ident(&name)
                );
                Ok((name, self.query_i64(&count)?))
            })
            .collect()
    }

    /// A checked read-only `sql` whose bare table names are session `id`'s tables, on a
    /// connection of its own: at most `limit` rows, interrupted after `timeout`.
    pub fn session_query(
        &self,
        id: &str,
        sql: &str,
        limit: usize,
        timeout: std::time::Duration,
    ) -> Result<QueryRows, BackendError> {
        let connection = self.reader()?;
        let use_session = format!("USE {}", ident(&catalog(id)));
        connection
            .execute_batch(&use_session)
            .map_err(query_error(&use_session))?;
        read_with_timeout(&connection, sql, limit, timeout)
    }
}
