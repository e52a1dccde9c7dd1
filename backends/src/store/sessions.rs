//! Sessions of the embedded engine: each an in-memory database attached to the embedded DuckDB
//! (`session_<id>`), so stored layers copy into it without leaving the process, and detaching
//! it frees its memory.

use geomill_planner::sql::quote::ident;

use super::Store;
use super::records::LayerRecord;
use crate::BackendError;
use crate::duckdb::query_error;
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

    /// A checked read-only `sql` over session `id`'s tables, on a connection of its own: each
    /// `(name, stored)` of `tables` binds the name the query spells to the session's table
    /// `stored` as a temporary view (the guard answered every table name the query reads, so no
    /// bare name reaches another table, a file or a replacement scan). At most `limit` rows,
    /// interrupted after `timeout`.
    pub fn session_query(
        &self,
        id: &str,
        sql: &str,
        tables: &[(String, String)],
        limit: usize,
        timeout: std::time::Duration,
    ) -> Result<QueryRows, BackendError> {
        let connection = self.reader()?;
        for (name, stored) in tables {
            let view = format!(
                "CREATE OR REPLACE TEMP VIEW {} AS SELECT * FROM {}.main.{}",
                ident(name),
                ident(&catalog(id)),
                ident(stored)
            );
            connection.execute(&view, []).map_err(query_error(&view))?;
        }
        read_with_timeout(&connection, sql, limit, timeout)
    }
}
