//! Remote layers (WFS, OGC API Features) registered without downloading anything: the catalog
//! rows come first, the features are loaded into the layer's table on first use.

use duckdb::Connection;

use super::Store;
use super::load::{inspect, load_layers, refresh_store_schemas};
use super::location::StoreLocation;
use super::records::{DatasetRecord, ENGINE, RejectedFile, RemoteLayer, SourceFile};
use crate::BackendError;
use crate::duckdb::query_error;

/// The remote source of dataset `id`, if it is a remote one.
pub(super) fn remote_layer(
    connection: &Connection,
    store: &StoreLocation,
    id: &str,
) -> Result<Option<RemoteLayer>, BackendError> {
    let sql = format!(
        "SELECT service_type, url, layer_name, CAST(loaded_at AS VARCHAR) FROM {} WHERE dataset_id = ?",
        store.catalog("remote_layers")
    );
    match connection.query_row(&sql, [id], |r| {
        Ok(RemoteLayer {
            service_type: r.get(0)?,
            url: r.get(1)?,
            layer_name: r.get(2)?,
            loaded_at: r.get(3)?,
        })
    }) {
        Ok(remote) => Ok(Some(remote)),
        Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
        Err(e) => Err(query_error(&sql)(e)),
    }
}

fn table_name(id: &str) -> String {
    let compact: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    format!("l_{compact}_0")
}

/// Runs `work` in a transaction on `connection`: committed when it succeeds, rolled back
/// when the engine fails or the input is rejected.
fn in_transaction<T>(
    connection: &Connection,
    work: impl FnOnce() -> Result<Result<T, RejectedFile>, BackendError>,
) -> Result<Result<T, RejectedFile>, BackendError> {
    connection
        .execute_batch("BEGIN TRANSACTION")
        .map_err(query_error("BEGIN"))?;
    let outcome = work();
    if matches!(outcome, Ok(Ok(_))) {
        connection
            .execute_batch("COMMIT")
            .map_err(query_error("COMMIT"))?;
    } else {
        let _ = connection.execute_batch("ROLLBACK");
    }
    outcome
}

impl Store {
    /// Records a remote layer as dataset `id` with one layer named after it, not loaded yet.
    pub fn register_remote(
        &self,
        id: &str,
        name: &str,
        crs: Option<&str>,
        remote: &RemoteLayer,
    ) -> Result<DatasetRecord, BackendError> {
        let connection = self.connection()?;
        let registered = in_transaction(&connection, || {
            let insert = format!(
                "INSERT INTO {} (id, name, format, crs, path) VALUES (?, ?, ?, ?, ?)",
                self.location.catalog("datasets")
            );
            connection
                .execute(
                    &insert,
                    duckdb::params![id, name, remote.service_type, crs, remote.url],
                )
                .map_err(query_error(&insert))?;
            let insert = format!(
                "INSERT INTO {} VALUES (?, 0, ?, ?, NULL, NULL, ?)",
                self.location.catalog("layers")
            );
            connection
                .execute(
                    &insert,
                    duckdb::params![id, remote.layer_name, table_name(id), crs],
                )
                .map_err(query_error(&insert))?;
            let insert = format!(
                "INSERT INTO {} VALUES (?, ?, ?, ?, NULL)",
                self.location.catalog("remote_layers")
            );
            connection
                .execute(
                    &insert,
                    duckdb::params![id, remote.service_type, remote.url, remote.layer_name],
                )
                .map_err(query_error(&insert))?;
            Ok(Ok(()))
        });
        drop(connection);
        self.catalog.invalidate();
        if let Err(rejected) = registered? {
            return Err(BackendError::Unavailable {
                engine: ENGINE,
                reason: rejected.0,
            });
        }
        self.dataset(id)?.ok_or(BackendError::Unavailable {
            engine: ENGINE,
            reason: "the dataset vanished after it was stored".into(),
        })
    }

    /// Loads the fetched features of remote dataset `id` from `source` (its first layer) into
    /// the layer's table and marks the layer loaded, in one transaction. `Ok(Err(_))` when the
    /// service's answer is not something GDAL can read.
    pub fn load_remote(
        &self,
        id: &str,
        source: &SourceFile,
    ) -> Result<Result<DatasetRecord, RejectedFile>, BackendError> {
        let connection = self.connection()?;
        let Some(remote) = remote_layer(&connection, &self.location, id)? else {
            return Err(BackendError::Unavailable {
                engine: ENGINE,
                reason: format!("dataset {id} is not a remote layer"),
            });
        };
        let described = format!("the answer of {}", remote.url);
        let (driver, mut layers) = match inspect(&connection, source, &described) {
            Ok(found) => found,
            Err(rejected) => return Ok(Err(rejected)),
        };
        layers.truncate(1);
        let loaded = in_transaction(&connection, || {
            let clear = format!(
                "DELETE FROM {layers} WHERE dataset_id = {id};\nDROP TABLE IF EXISTS {table};",
                layers = self.location.catalog("layers"),
                id = geomill_planner::sql::quote::string(id),
                table = self.location.layer(&table_name(id)),
            );
            connection
                .execute_batch(&clear)
                .map_err(query_error(&clear))?;
            let records =
                match load_layers(&connection, &self.location, id, source, &driver, &layers)? {
                    Ok(records) => records,
                    Err(rejected) => return Ok(Err(rejected)),
                };
            let crs = records.iter().find_map(|l| l.crs.clone());
            let update = format!(
                "UPDATE {} SET name = ? WHERE dataset_id = ?;",
                self.location.catalog("layers")
            );
            connection
                .execute(&update, [remote.layer_name.as_str(), id])
                .map_err(query_error(&update))?;
            let update = format!(
                "UPDATE {} SET crs = coalesce(?, crs) WHERE id = ?",
                self.location.catalog("datasets")
            );
            connection
                .execute(&update, duckdb::params![crs, id])
                .map_err(query_error(&update))?;
            let update = format!(
                "UPDATE {} SET loaded_at = current_timestamp WHERE dataset_id = ?",
                self.location.catalog("remote_layers")
            );
            connection
                .execute(&update, [id])
                .map_err(query_error(&update))?;
            Ok(Ok(()))
        });
        refresh_store_schemas(&connection, &self.location)?;
        drop(connection);
        self.catalog.invalidate();
        if let Err(rejected) = loaded? {
            return Ok(Err(rejected));
        }
        self.dataset(id)?.map(Ok).ok_or(BackendError::Unavailable {
            engine: ENGINE,
            reason: "the dataset vanished while its features were loaded".into(),
        })
    }
}
