//! The dataset store: catalog tables (`datasets`, `layers`) and layers loaded through GDAL
//! into tables of their own, in the DuckDB file or in PostgreSQL (see `location`).

use geomill_planner::sql::quote::string;

use super::Store;
use super::load::{format_label, inspect, load_layers, refresh_store_schemas};
use super::records::{DatasetRecord, ENGINE, LayerRecord, RejectedFile, SourceFile};
use super::remote::remote_layer;
use crate::BackendError;

use crate::duckdb::query_error;

impl Store {
    /// Loads every layer of `source` into new tables and records the dataset, all in one
    /// transaction: on any failure nothing is left behind. `Ok(Err(_))` is a file the user must
    /// fix (not spatial, no geometry, unreadable), `Err(_)` a failure of the engine.
    pub fn ingest(
        &self,
        id: &str,
        name: &str,
        stored_path: &str,
        source: &SourceFile,
    ) -> Result<Result<DatasetRecord, RejectedFile>, BackendError> {
        let connection = self.connection()?;
        let (driver, layers) = match inspect(&connection, source, name) {
            Ok(found) => found,
            Err(rejected) => return Ok(Err(rejected)),
        };
        connection
            .execute_batch("BEGIN TRANSACTION")
            .map_err(query_error("BEGIN"))?;
        let outcome = load_layers(&connection, &self.location, id, source, &driver, &layers);
        let records = match outcome {
            Ok(Ok(records)) => records,
            Ok(Err(rejected)) => {
                connection
                    .execute_batch("ROLLBACK")
                    .map_err(query_error("ROLLBACK"))?;
                // A DBF without a code page whose bytes are not UTF-8: read it again as
                // Latin-1, GDAL's reading of Shapefiles that declare no encoding.
                let latin1 = "ENCODING=ISO-8859-1".to_owned();
                if rejected.0.contains("Invalid unicode") && !source.open_options.contains(&latin1)
                {
                    drop(connection);
                    let mut retry = source.clone();
                    retry.open_options.push(latin1);
                    return self.ingest(id, name, stored_path, &retry);
                }
                return Ok(Err(rejected));
            }
            Err(error) => {
                let _ = connection.execute_batch("ROLLBACK");
                return Err(error);
            }
        };
        let crs = records.iter().find_map(|l| l.crs.clone());
        let format = source
            .format
            .clone()
            .unwrap_or_else(|| format_label(&driver));
        let insert = format!(
            "INSERT INTO {} (id, name, format, crs, path) VALUES (?, ?, ?, ?, ?)",
            self.location.catalog("datasets")
        );
        let inserted = connection
            .execute(&insert, duckdb::params![id, name, format, crs, stored_path])
            .map_err(query_error(&insert))
            .and_then(|_| {
                connection
                    .execute_batch("COMMIT")
                    .map_err(query_error("COMMIT"))
            });
        if let Err(error) = inserted {
            let _ = connection.execute_batch("ROLLBACK");
            return Err(error);
        }
        refresh_store_schemas(&connection, &self.location)?;
        drop(connection);
        self.catalog.invalidate();
        self.dataset(id)?.map(Ok).ok_or(BackendError::Unavailable {
            engine: ENGINE,
            reason: "the dataset vanished after it was stored".into(),
        })
    }

    /// Registers a file the store does not load (a raster: its kernels read the file in
    /// place) as a dataset without layers: its catalog row alone.
    pub fn register_file(
        &self,
        id: &str,
        name: &str,
        format: &str,
        crs: Option<&str>,
        stored_path: &str,
    ) -> Result<DatasetRecord, BackendError> {
        let insert = format!(
            "INSERT INTO {} (id, name, format, crs, path) VALUES (?, ?, ?, ?, ?)",
            self.location.catalog("datasets")
        );
        self.connection()?
            .execute(&insert, duckdb::params![id, name, format, crs, stored_path])
            .map_err(query_error(&insert))?;
        self.catalog.invalidate();
        self.dataset(id)?.ok_or(BackendError::Unavailable {
            engine: ENGINE,
            reason: "the dataset vanished after it was stored".into(),
        })
    }

    /// Every dataset, newest first, paged.
    pub fn datasets(
        &self,
        limit: i64,
        offset: i64,
    ) -> Result<(i64, Vec<DatasetRecord>), BackendError> {
        self.datasets_except(limit, offset, &[])
    }

    /// [`Self::datasets`] without those whose id is in `except` (the total counts the rest).
    pub fn datasets_except(
        &self,
        limit: i64,
        offset: i64,
        except: &[String],
    ) -> Result<(i64, Vec<DatasetRecord>), BackendError> {
        let connection = self.connection()?;
        let datasets = self.location.catalog("datasets");
        let excluded: Vec<String> = except.iter().map(|id| string(id)).collect();
        let filter = if excluded.is_empty() {
            String::new()
        } else {
            format!(" WHERE id NOT IN ({})", excluded.join(", "))
        };
        let total: i64 = connection
            .query_row(
                &format!("SELECT count(*) FROM {datasets}{filter}"),
                [],
                |r| r.get(0),
            )
            .map_err(query_error("count datasets"))?;
        let sql = format!(
            "SELECT id FROM {datasets}{filter} ORDER BY created_at DESC, id LIMIT ? OFFSET ?"
        );
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let ids: Vec<String> = statement
            .query_map(duckdb::params![limit, offset], |r| r.get(0))
            .map_err(query_error(&sql))?
            .collect::<Result<_, _>>()
            .map_err(query_error(&sql))?;
        drop(statement);
        drop(connection);
        let mut records = Vec::new();
        for id in ids {
            records.extend(self.dataset(&id)?);
        }
        Ok((total, records))
    }

    /// One dataset with its layers (from memory when the catalog has not changed since it was
    /// last read). In persistent mode the catalog is read each time: other servers
    /// and clients of the database change it.
    pub fn dataset(&self, id: &str) -> Result<Option<DatasetRecord>, BackendError> {
        if self.location.is_postgis() {
            return self.read_dataset(id);
        }
        if let Some(record) = self.catalog.get(id) {
            return Ok(Some(record));
        }
        let read_at = self.catalog.version();
        let record = self.read_dataset(id)?;
        if let Some(record) = &record {
            self.catalog.put(record, read_at);
        }
        Ok(record)
    }

    fn read_dataset(&self, id: &str) -> Result<Option<DatasetRecord>, BackendError> {
        let connection = self.connection()?;
        let sql = format!(
            "SELECT id, name, format, crs, path, CAST(created_at AS VARCHAR) FROM {} WHERE id = ?",
            self.location.catalog("datasets")
        );
        let row = connection.query_row(&sql, [id], |r| {
            Ok(DatasetRecord {
                id: r.get(0)?,
                name: r.get(1)?,
                format: r.get(2)?,
                crs: r.get(3)?,
                path: r.get(4)?,
                created_at: r.get(5)?,
                layers: Vec::new(),
                remote: None,
            })
        });
        let mut record = match row {
            Ok(record) => record,
            Err(duckdb::Error::QueryReturnedNoRows) => return Ok(None),
            Err(e) => return Err(query_error(&sql)(e)),
        };
        let sql = format!(
            "SELECT name, table_name, geometry_type, feature_count, crs FROM {} WHERE dataset_id = ? ORDER BY position",
            self.location.catalog("layers")
        );
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        record.layers = statement
            .query_map([id], |r| {
                Ok(LayerRecord {
                    name: r.get(0)?,
                    table_name: r.get(1)?,
                    geometry_type: r.get(2)?,
                    feature_count: r.get(3)?,
                    crs: r.get(4)?,
                })
            })
            .map_err(query_error(&sql))?
            .collect::<Result<_, _>>()
            .map_err(query_error(&sql))?;
        record.remote = remote_layer(&connection, &self.location, id)?;
        Ok(Some(record))
    }

    /// Renames a dataset; `false` when there is no such dataset.
    pub fn rename_dataset(&self, id: &str, name: &str) -> Result<bool, BackendError> {
        let sql = format!(
            "UPDATE {} SET name = ? WHERE id = ?",
            self.location.catalog("datasets")
        );
        let changed = self
            .connection()?
            .execute(&sql, [name, id])
            .map_err(query_error(&sql))?;
        self.catalog.invalidate();
        Ok(changed > 0)
    }

    /// Deletes a dataset's tables and catalog rows in one transaction; `false` when absent.
    pub fn delete_dataset(&self, id: &str) -> Result<bool, BackendError> {
        let Some(record) = self.dataset(id)? else {
            return Ok(false);
        };
        let mut script = String::from("BEGIN TRANSACTION;\n");
        for layer in &record.layers {
            script.push_str(&format!(
                "DROP TABLE IF EXISTS {};\n",
                self.location.layer(&layer.table_name)
            ));
        }
        script.push_str(&format!(
            "DELETE FROM {layers} WHERE dataset_id = {id};\nDELETE FROM {remote} WHERE dataset_id = {id};\nDELETE FROM {datasets} WHERE id = {id};\nCOMMIT;",
            id = string(id),
            layers = self.location.catalog("layers"),
            remote = self.location.catalog("remote_layers"),
            datasets = self.location.catalog("datasets"),
        ));
        let connection = self.connection()?;
        let outcome = connection.execute_batch(&script);
        if outcome.is_err() {
            let _ = connection.execute_batch("ROLLBACK");
        }
        drop(connection);
        self.catalog.invalidate();
        outcome.map_err(query_error(&script))?;
        // Styles are kept in the embedded database whatever the store's location.
        self.delete_styles(id)?;
        Ok(true)
    }
}
