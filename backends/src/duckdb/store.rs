//! The dataset store: catalog tables (`datasets`, `layers`) and layers loaded through GDAL
//! into tables of their own, in the DuckDB file or in PostgreSQL (see `location`).

use duckdb::Connection;
use geomill_planner::sql::quote::{ident, string};
use serde::{Deserialize, Serialize};

use super::EmbeddedEngine;
use super::location::{PG_LAYER_SCHEMA, STORE_ALIAS, StoreLocation};
use super::remote::{RemoteLayer, remote_layer};
use crate::BackendError;

pub(super) const ENGINE: &str = "duckdb";

/// What GDAL says a file holds.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct MetaLayer {
    pub(super) name: String,
    #[serde(default)]
    geometry_fields: Vec<MetaGeometryField>,
}

#[derive(Debug, Clone, Deserialize)]
struct MetaGeometryField {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    crs: Option<MetaCrs>,
}

#[derive(Debug, Clone, Deserialize)]
struct MetaCrs {
    #[serde(default)]
    auth_name: Option<String>,
    #[serde(default)]
    auth_code: Option<String>,
}

/// A layer as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerRecord {
    pub name: String,
    pub table_name: String,
    pub geometry_type: Option<String>,
    /// `None` for a remote layer not fetched yet.
    pub feature_count: Option<i64>,
    pub crs: Option<String>,
}

impl LayerRecord {
    /// The EPSG code of the layer's CRS, when it has one (`EPSG:2263` → 2263).
    pub fn epsg_code(&self) -> Option<u32> {
        self.crs.as_deref()?.strip_prefix("EPSG:")?.parse().ok()
    }
}

/// A dataset as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DatasetRecord {
    pub id: String,
    pub name: String,
    pub format: String,
    pub crs: Option<String>,
    pub path: String,
    pub created_at: String,
    pub layers: Vec<LayerRecord>,
    /// Where a lazily registered WFS / OGC API layer comes from.
    pub remote: Option<RemoteLayer>,
}

/// A file to load: where it is for GDAL, and GDAL open options.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// A path GDAL opens (`/vsizip/...` for zip archives), or DuckDB's Parquet reader.
    pub gdal_path: String,
    pub open_options: Vec<String>,
    pub reader: Reader,
}

/// What reads a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reader {
    /// GDAL, through the spatial extension's `ST_Read`.
    #[default]
    Gdal,
    /// DuckDB's own Parquet reader (GeoParquet geometry becomes GEOMETRY with its CRS).
    Parquet,
}

/// Why a file could not be loaded: the user's file, not the server.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct RejectedFile(pub String);

pub(super) fn query_error(sql: &str) -> impl Fn(duckdb::Error) -> BackendError + '_ {
    move |e| BackendError::Query {
        engine: ENGINE,
        reason: e.to_string(),
        sql: sql.to_owned(),
    }
}

/// The CRS DuckDB carries in a geometry type: `GEOMETRY('EPSG:2263')` → `EPSG:2263`.
pub(super) fn crs_of_type(data_type: &str) -> Option<String> {
    let inner = data_type.split_once("('")?.1.split_once("')")?.0;
    inner.starts_with("EPSG:").then(|| inner.to_owned())
}

fn format_label(driver: &str) -> String {
    match driver {
        "ESRI Shapefile" => "SHP".to_owned(),
        "FlatGeobuf" => "FGB".to_owned(),
        "LIBKML" => "KML".to_owned(),
        other => other.to_uppercase(),
    }
}

fn epsg(crs: Option<&MetaCrs>) -> Option<String> {
    let crs = crs?;
    match (crs.auth_name.as_deref(), crs.auth_code.as_deref()) {
        (Some(name), Some(code)) if !code.is_empty() => {
            Some(format!("{}:{code}", name.to_uppercase()))
        }
        _ => None,
    }
}

/// `ST_Read(...)` of a layer (the first when `layer` is `None`) with the source's options.
fn read_call(source: &SourceFile, layer: Option<&str>) -> String {
    if source.reader == Reader::Parquet {
        return format!("read_parquet({})", string(&source.gdal_path));
    }
    let mut call = format!("ST_Read({}", string(&source.gdal_path));
    if let Some(layer) = layer {
        call.push_str(&format!(", layer := {}", string(layer)));
    }
    if !source.open_options.is_empty() {
        let options: Vec<String> = source.open_options.iter().map(|o| string(o)).collect();
        call.push_str(&format!(", open_options := [{}]", options.join(", ")));
    }
    call.push(')');
    call
}

impl EmbeddedEngine {
    /// Creates the catalog tables if they are missing.
    pub fn init_store(&self) -> Result<(), BackendError> {
        // Local work (jobs, rules, ...) always has its tables here; the dataset catalog too
        // unless it lives in PostgreSQL (created there when first attached).
        let local = "CREATE SCHEMA IF NOT EXISTS meta; CREATE SCHEMA IF NOT EXISTS layers;";
        let catalog = if self.store.is_postgis() {
            String::new()
        } else {
            super::location::catalog_ddl(&self.store)
        };
        let script = [
            local,
            &catalog,
            super::jobs::JOBS_DDL,
            super::published::PUBLISHED_DDL,
            super::rules::RULES_DDL,
            super::schedules::SCHEDULES_DDL,
            super::triggers::TRIGGERS_DDL,
            super::tracking::TRACKING_DDL,
            super::scenarios::SCENARIOS_DDL,
        ]
        .join("\n");
        self.lock()?
            .execute_batch(&script)
            .map_err(query_error("catalog tables"))
    }

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
        let outcome = load_layers(&connection, &self.store, id, source, &driver, &layers);
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
        let format = format_label(&driver);
        let insert = format!(
            "INSERT INTO {} (id, name, format, crs, path) VALUES (?, ?, ?, ?, ?)",
            self.store.catalog("datasets")
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
        refresh_store_schemas(&connection, &self.store)?;
        drop(connection);
        self.catalog.invalidate();
        self.dataset(id)?.map(Ok).ok_or(BackendError::Unavailable {
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
        let datasets = self.store.catalog("datasets");
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
        if self.store.is_postgis() {
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
            self.store.catalog("datasets")
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
            self.store.catalog("layers")
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
        record.remote = remote_layer(&connection, &self.store, id)?;
        Ok(Some(record))
    }

    /// Renames a dataset; `false` when there is no such dataset.
    pub fn rename_dataset(&self, id: &str, name: &str) -> Result<bool, BackendError> {
        let sql = format!(
            "UPDATE {} SET name = ? WHERE id = ?",
            self.store.catalog("datasets")
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
                self.store.layer(&layer.table_name)
            ));
        }
        script.push_str(&format!(
            "DELETE FROM {layers} WHERE dataset_id = {id};\nDELETE FROM {remote} WHERE dataset_id = {id};\nDELETE FROM {datasets} WHERE id = {id};\nCOMMIT;",
            id = string(id),
            layers = self.store.catalog("layers"),
            remote = self.store.catalog("remote_layers"),
            datasets = self.store.catalog("datasets"),
        ));
        let connection = self.connection()?;
        let outcome = connection.execute_batch(&script);
        if outcome.is_err() {
            let _ = connection.execute_batch("ROLLBACK");
        }
        drop(connection);
        self.catalog.invalidate();
        outcome.map_err(query_error(&script))?;
        Ok(true)
    }
}

/// The driver and layers of a file GDAL (or the Parquet reader) can open; `Err` names why not.
pub(super) fn inspect(
    connection: &Connection,
    source: &SourceFile,
    name: &str,
) -> Result<(String, Vec<MetaLayer>), RejectedFile> {
    // ST_Read_Meta crashes the process on files GDAL cannot open (spatial 1.5.5), while
    // ST_Read fails cleanly: only a file that passes this probe is inspected further.
    let probe = format!("SELECT * FROM {} LIMIT 0", read_call(source, None));
    if let Err(error) = connection.execute_batch(&probe) {
        // The reason without server paths: the client knows its file by name.
        let reason = error.to_string().replace(&source.gdal_path, name);
        let reason = reason.lines().next().unwrap_or_default();
        return Err(RejectedFile(format!(
            "{name} is not a spatial file GDAL can read ({reason})"
        )));
    }
    let (driver, layers) = if source.reader == Reader::Parquet {
        let stem = std::path::Path::new(&source.gdal_path)
            .file_stem()
            .map_or_else(|| "layer".to_owned(), |s| s.to_string_lossy().into_owned());
        (
            "PARQUET".to_owned(),
            vec![MetaLayer {
                name: stem,
                geometry_fields: Vec::new(),
            }],
        )
    } else {
        let meta_sql = format!(
            "SELECT driver_short_name, to_json(layers) FROM ST_Read_Meta({})",
            string(&source.gdal_path)
        );
        let meta: Result<(String, String), _> =
            connection.query_row(&meta_sql, [], |r| Ok((r.get(0)?, r.get(1)?)));
        let Ok((driver, layers_json)) = meta else {
            return Err(RejectedFile(format!(
                "{name} is not a spatial file GDAL can read"
            )));
        };
        let layers: Vec<MetaLayer> = serde_json::from_str(&layers_json).unwrap_or_default();
        (driver, layers)
    };
    if layers.is_empty() {
        return Err(RejectedFile(format!("{name} has no layers")));
    }
    Ok((driver, layers))
}

/// `CREATE TABLE table AS` the layer. A DBF without a code page whose bytes are not UTF-8 is
/// read again as Latin-1 (GDAL's reading of Shapefiles that declare no encoding).
fn create_layer_table(
    connection: &Connection,
    table: &str,
    source: &SourceFile,
    layer: &str,
) -> Result<(), duckdb::Error> {
    let create = format!(
        "CREATE TABLE {table} AS SELECT * FROM {}",
        read_call(source, Some(layer))
    );
    connection.execute_batch(&create)
}

/// Loads each layer into `layers.l_<id>_<n>` and records it; `Ok(Err)` for a file problem.
pub(super) fn load_layers(
    connection: &Connection,
    store: &StoreLocation,
    id: &str,
    source: &SourceFile,
    driver: &str,
    layers: &[MetaLayer],
) -> Result<Result<Vec<LayerRecord>, RejectedFile>, BackendError> {
    let mut records = Vec::new();
    let compact: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    for (position, layer) in layers.iter().enumerate() {
        let table_name = format!("l_{compact}_{position}");
        let table = store.layer(&table_name);
        if let Err(error) = create_layer_table(connection, &table, source, &layer.name) {
            return Ok(Err(RejectedFile(format!(
                "layer {} cannot be read: {error}",
                layer.name
            ))));
        }
        let geometry_column: Option<(String, String)> = connection
            .query_row(
                &format!(
                    "SELECT column_name, data_type FROM duckdb_columns() WHERE {} \
                     AND data_type LIKE 'GEOMETRY%' ORDER BY column_index LIMIT 1",
                    store.layer_columns_filter(&table_name)
                ),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .ok();
        let geometry_type_name = geometry_column
            .as_ref()
            .map(|(_, ty)| ty.clone())
            .unwrap_or_default();
        match geometry_column.as_ref().map(|(name, _)| name.as_str()) {
            None => {
                return Ok(Err(RejectedFile(format!(
                    "layer {} has no geometry",
                    layer.name
                ))));
            }
            Some("geom") => {}
            Some(other) => {
                // Geometry always travels as `geom` (GML, for one, names it after its element).
                let rename = format!("ALTER TABLE {table} RENAME COLUMN {} TO geom", ident(other));
                connection
                    .execute_batch(&rename)
                    .map_err(query_error(&rename))?;
            }
        }
        // GDAL's feature ids are not attributes (ogrinfo does not list them); written back they
        // would collide with the FID of the file written. Features use their row number.
        let fid_columns = if driver == "GPKG" {
            "\"OGC_FID\", \"fid\""
        } else {
            "\"OGC_FID\""
        };
        let mut drop_fid = String::new();
        for column in fid_columns.split(", ") {
            drop_fid.push_str(&format!(
                "ALTER TABLE {table} DROP COLUMN IF EXISTS {column};\n"
            ));
        }
        connection
            .execute_batch(&drop_fid)
            .map_err(query_error(&drop_fid))?;
        let count_sql = format!("SELECT count(*) FROM {table}");
        let feature_count: i64 = connection
            .query_row(&count_sql, [], |r| r.get(0))
            .map_err(query_error(&count_sql))?;
        let field = layer.geometry_fields.first();
        let record = LayerRecord {
            name: layer.name.clone(),
            table_name,
            geometry_type: field.and_then(|f| f.kind.clone()),
            feature_count: Some(feature_count),
            crs: epsg(field.and_then(|f| f.crs.as_ref()))
                .or_else(|| crs_of_type(&geometry_type_name)),
        };
        let insert = format!(
            "INSERT INTO {} VALUES (?, ?, ?, ?, ?, ?, ?)",
            store.catalog("layers")
        );
        connection
            .execute(
                &insert,
                duckdb::params![
                    id,
                    i32::try_from(position).unwrap_or(i32::MAX),
                    record.name,
                    record.table_name,
                    record.geometry_type,
                    record.feature_count,
                    record.crs
                ],
            )
            .map_err(query_error(&insert))?;
        if let StoreLocation::Postgis { .. } = store {
            postgis_layer_keys(connection, &record.table_name, record.epsg_code())?;
        }
        records.push(record);
    }
    Ok(Ok(records))
}

/// In PostgreSQL, a layer table gets its SRID on `geom`, a `fid` identity key (the features'
/// ids) and a GiST index, in the transaction that created it.
fn postgis_layer_keys(
    connection: &Connection,
    table_name: &str,
    srid: Option<u32>,
) -> Result<(), BackendError> {
    let table = format!("{PG_LAYER_SCHEMA}.{}", ident(table_name));
    let srid = srid.unwrap_or(0);
    let index = ident(&format!("{table_name}_geom_idx"));
    let remote = format!(
        "ALTER TABLE {table} ALTER COLUMN geom TYPE geometry(Geometry, {srid}) USING ST_SetSRID(geom, {srid}); \
         ALTER TABLE {table} ADD COLUMN fid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY; \
         CREATE INDEX {index} ON {table} USING gist (geom); ANALYZE {table}"
    );
    let call = format!(
        "CALL postgres_execute('{STORE_ALIAS}', {})",
        string(&remote)
    );
    connection.execute_batch(&call).map_err(query_error(&call))
}

/// After tables changed in PostgreSQL, DuckDB reads their columns afresh (persistent mode).
pub(super) fn refresh_store_schemas(
    connection: &Connection,
    store: &StoreLocation,
) -> Result<(), BackendError> {
    if store.is_postgis() {
        let call = "CALL pg_clear_cache()";
        connection.execute_batch(call).map_err(query_error(call))?;
    }
    Ok(())
}
