//! A stored layer as the rest of geomill uses it: its schema for the planner, and its rows
//! written out to a file or copied into PostGIS.

use geomill_planner::plan::operator::ExportFormat;
use geomill_planner::schema::{Column, FieldType, Schema};

use super::Store;
use super::records::LayerRecord;
use crate::BackendError;
use crate::duckdb::query_error;

/// The planner's field type of a DuckDB column type.
fn field_type(duckdb_type: &str) -> FieldType {
    let upper = duckdb_type.to_ascii_uppercase();
    match upper.as_str() {
        t if t.starts_with("GEOMETRY") => FieldType::Geometry,
        "VARCHAR" | "TEXT" | "STRING" => FieldType::Text,
        "BOOLEAN" => FieldType::Boolean,
        "DATE" => FieldType::Date,
        t if t.starts_with("TIMESTAMP") => FieldType::Timestamp,
        "TINYINT" | "SMALLINT" | "INTEGER" | "BIGINT" | "HUGEINT" | "UTINYINT" | "USMALLINT"
        | "UINTEGER" | "UBIGINT" => FieldType::Integer,
        t if t.starts_with("DECIMAL") || t == "DOUBLE" || t == "FLOAT" || t == "REAL" => {
            FieldType::Double
        }
        _ => FieldType::Unknown,
    }
}

impl Store {
    /// The planner's view of a stored layer: its columns and CRS.
    pub fn layer_schema(&self, layer: &LayerRecord) -> Result<Schema, BackendError> {
        let connection = self.connection()?;
        let sql = format!(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE {} ORDER BY column_index",
            self.location.layer_columns_filter(&layer.table_name)
        );
        let sql = sql.as_str();
        let mut statement = connection.prepare(sql).map_err(query_error(sql))?;
        let columns = statement
            .query_map([], |r| {
                Ok(Column {
                    name: r.get::<_, String>(0)?,
                    ty: field_type(&r.get::<_, String>(1)?),
                })
            })
            .map_err(query_error(sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(sql))?;
        Ok(Schema {
            columns,
            crs: layer.crs.clone(),
        })
    }

    /// Writes a stored layer to `destination` in `format` (for Shapefiles, a folder that gets
    /// `<layer>.shp` and its companions).
    pub fn export_layer(
        &self,
        layer: &LayerRecord,
        destination: &str,
        format: ExportFormat,
    ) -> Result<(), BackendError> {
        let from = format!("({})", self.location.layer_rows(&layer.table_name));
        crate::duckdb::copy_to_file(
            &*self.connection()?,
            &from,
            destination,
            format,
            &layer.name,
        )
    }

    /// Copies a stored layer into PostGIS as `schema.table` with the layer's SRID (see
    /// [`crate::duckdb::EmbeddedEngine::copy_to_postgis`]).
    #[cfg(feature = "postgis")]
    pub fn copy_layer_to_postgis(
        &self,
        dsn: &str,
        layer: &LayerRecord,
        target: (&str, &str),
    ) -> Result<i64, BackendError> {
        let select = self.location.layer_rows(&layer.table_name);
        self.engine
            .copy_to_postgis(dsn, &select, target, layer.epsg_code())
    }
}
