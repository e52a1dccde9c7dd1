//! One repository shape for the catalog records kept by id (rules, schedules, triggers): put,
//! get, list and delete, written once over a description of the record's table. The app reaches
//! these records only through [`Repository`], so a test can stand a fake behind it.

use duckdb::{Row, ToSql};

use super::Store;
use crate::BackendError;
use crate::duckdb::query_error;

/// Records kept by id: all the app needs of where they are kept.
pub trait Repository<T>: Send + Sync + std::fmt::Debug {
    /// Stores `record`, replacing the one with the same id.
    fn put(&self, record: &T) -> Result<(), BackendError>;
    /// The record with `id`.
    fn get(&self, id: &str) -> Result<Option<T>, BackendError>;
    /// Every record, oldest first.
    fn list(&self) -> Result<Vec<T>, BackendError>;
    /// Deletes the record with `id`; `false` when there was none.
    fn delete(&self, id: &str) -> Result<bool, BackendError>;
}

/// A record kept as one row of a catalog table with an `id` primary key and a `created_at`
/// column (the table is created by `schema.rs`).
pub(super) trait CatalogRow: Sized + Send + Sync {
    /// The table, schema-qualified (`meta.rules`).
    const TABLE: &'static str;
    /// The columns, `id` first, in the order of [`CatalogRow::values`] and of the row read.
    const COLUMNS: &'static [&'static str];
    fn from_row(row: &Row<'_>) -> Result<Self, duckdb::Error>;
    /// The values of [`CatalogRow::COLUMNS`], in order.
    fn values(&self) -> Vec<&dyn ToSql>;
}

fn select<T: CatalogRow>() -> String {
    format!("SELECT {} FROM {}", T::COLUMNS.join(", "), T::TABLE)
}

impl<T: CatalogRow> Repository<T> for Store {
    fn put(&self, record: &T) -> Result<(), BackendError> {
        let marks = vec!["?"; T::COLUMNS.len()].join(", ");
        let sql = format!(
            "INSERT OR REPLACE INTO {} ({}) VALUES ({marks})",
            T::TABLE,
            T::COLUMNS.join(", ")
        );
        self.connection()?
            .execute(&sql, &record.values()[..])
            .map_err(query_error(&sql))?;
        Ok(())
    }

    fn get(&self, id: &str) -> Result<Option<T>, BackendError> {
        let sql = format!("{} WHERE id = ?", select::<T>());
        match self.connection()?.query_row(&sql, [id], T::from_row) {
            Ok(record) => Ok(Some(record)),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(query_error(&sql)(e)),
        }
    }

    fn list(&self) -> Result<Vec<T>, BackendError> {
        let sql = format!("{} ORDER BY created_at, id", select::<T>());
        let connection = self.connection()?;
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let records = statement
            .query_map([], T::from_row)
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok(records)
    }

    fn delete(&self, id: &str) -> Result<bool, BackendError> {
        let sql = format!("DELETE FROM {} WHERE id = ?", T::TABLE);
        let changed = self
            .connection()?
            .execute(&sql, [id])
            .map_err(query_error(&sql))?;
        Ok(changed > 0)
    }
}
