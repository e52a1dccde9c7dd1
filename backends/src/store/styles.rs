//! Layer styles (`meta.styles`): the style of each layer of a dataset, as the JSON of the
//! app's style model, and its `layer_styles` row in an exported GeoPackage.

use geomill_planner::sql::quote::{ident, string};

use super::Store;
use crate::BackendError;
use crate::duckdb::query_error;

impl Store {
    /// Stores the style (JSON text) of a dataset's layer, replacing the one it had.
    pub fn put_style(
        &self,
        dataset_id: &str,
        layer: &str,
        style: &str,
        updated_at: &str,
    ) -> Result<(), BackendError> {
        let sql = "INSERT OR REPLACE INTO meta.styles (dataset_id, layer, style, updated_at) \
                   VALUES (?, ?, ?, ?)";
        self.connection()?
            .execute(sql, [dataset_id, layer, style, updated_at])
            .map(|_| ())
            .map_err(query_error(sql))
    }

    /// The style (JSON text) of a dataset's layer, if one was stored.
    pub fn style(&self, dataset_id: &str, layer: &str) -> Result<Option<String>, BackendError> {
        let sql = "SELECT style FROM meta.styles WHERE dataset_id = ? AND layer = ?";
        let connection = self.connection()?;
        let mut statement = connection.prepare(sql).map_err(query_error(sql))?;
        let mut rows = statement
            .query_map([dataset_id, layer], |r| r.get::<_, String>(0))
            .map_err(query_error(sql))?;
        rows.next().transpose().map_err(query_error(sql))
    }

    /// Forgets the styles of a dataset's layers.
    pub fn delete_styles(&self, dataset_id: &str) -> Result<(), BackendError> {
        let sql = "DELETE FROM meta.styles WHERE dataset_id = ?";
        self.connection()?
            .execute(sql, [dataset_id])
            .map(|_| ())
            .map_err(query_error(sql))
    }

    /// Writes `qml` (written at `written_at`, RFC 3339) as the default style of `table` into the
    /// GeoPackage at `path`, as QGIS keeps styles there: a row of the `layer_styles` table
    /// (created when missing), through DuckDB's sqlite extension. The table is not registered in
    /// `gpkg_contents` (DuckDB cannot bind the SQLite defaults that table declares); GDAL lists
    /// unregistered tables of a GeoPackage by default, and QGIS reads them through GDAL.
    pub fn write_gpkg_style(
        &self,
        path: &str,
        table: &str,
        geometry_column: &str,
        qml: &str,
        written_at: &str,
    ) -> Result<(), BackendError> {
        static ATTACHMENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = ATTACHMENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let alias = ident(&format!("gpkg_style_{n}"));
        let attach = format!(
            "LOAD sqlite; ATTACH {} AS {alias} (TYPE sqlite)",
            string(path)
        );
        let write = format!(
            "CREATE TABLE IF NOT EXISTS {alias}.layer_styles (id INTEGER PRIMARY KEY, \
             f_table_catalog TEXT, f_table_schema TEXT, f_table_name TEXT, \
             f_geometry_column TEXT, styleName TEXT, styleQML TEXT, styleSLD TEXT, \
             useAsDefault BOOLEAN, description TEXT, owner TEXT, ui TEXT, update_time TEXT);
             INSERT INTO {alias}.layer_styles (id, f_table_catalog, f_table_schema, f_table_name, \
             f_geometry_column, styleName, styleQML, styleSLD, useAsDefault, description, owner, \
             ui, update_time) VALUES (1, '', '', {table}, {geometry}, {table}, {qml}, '', true, \
             'geomill', '', NULL, {at});",
            table = string(table),
            geometry = string(geometry_column),
            qml = string(qml),
            at = string(written_at),
        );
        let connection = self.engine.reader()?;
        connection
            .execute_batch(&attach)
            .map_err(query_error(&attach))?;
        let written = connection
            .execute_batch(&write)
            .map_err(query_error(&write));
        let _ = connection.execute_batch(&format!("DETACH {alias}"));
        written
    }
}
