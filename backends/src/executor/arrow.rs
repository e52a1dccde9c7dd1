//! Moving layers between the embedded DuckDB engine and the native backend through Arrow:
//! out with DuckDB's Arrow export (geometry as WKB) or straight from the GeoParquet file a
//! stored layer is a view over, back through a GeoParquet file that DuckDB scans, so
//! attributes are never copied row by row.

use std::path::Path;

use crate::duckdb::{EmbeddedEngine, InPlaceParquet};
use arrow::datatypes::DataType;
use geomill_planner::schema::GEOM;

use geomill_native::{Layer, NativeError, read_geoparquet, write_geoparquet};

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The rows of a DuckDB query as a layer; its geometry column `geometry` is exported as WKB.
pub fn query_layer(
    engine: &EmbeddedEngine,
    query: &str,
    geometry: &str,
    crs: Option<String>,
) -> Result<Layer, NativeError> {
    let connection = engine
        .connection()
        .map_err(|e| NativeError::Transfer(e.to_string()))?;
    query_layer_on(&connection, query, geometry, crs)
}

/// The rows of a query on `connection` (which sees its own temporary tables) as a layer.
pub fn query_layer_on(
    connection: &duckdb::Connection,
    query: &str,
    geometry: &str,
    crs: Option<String>,
) -> Result<Layer, NativeError> {
    let g = quoted(geometry);
    let sql = format!("SELECT * REPLACE (ST_AsWKB({g}) AS {g}) FROM ({query})");
    let mut statement = connection
        .prepare(&sql)
        .map_err(|e| NativeError::Transfer(e.to_string()))?;
    let arrow = statement
        .query_arrow([])
        .map_err(|e| NativeError::Transfer(e.to_string()))?;
    let schema = arrow.get_schema();
    let batches = arrow.collect();
    Layer::new(schema, batches, geometry, crs)
}

/// The select list of a layer read for `columns` (`None`: every column): the geometry first.
pub fn select_list(columns: Option<&[String]>) -> String {
    match columns {
        None => "*".to_owned(),
        Some(columns) => std::iter::once(GEOM)
            .chain(columns.iter().map(String::as_str).filter(|c| *c != GEOM))
            .map(quoted)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The rows of a stored layer that is a view over a GeoParquet file, read from the file (row
/// groups in parallel, only `columns`), as the view gives them: the geometry named `geom`,
/// GDAL's `OGC_FID` left out. Declines what the view would read otherwise: a geometry column
/// the file's `geo` metadata does not name, a column asked for that the file lacks.
pub fn in_place_layer(
    file: &InPlaceParquet,
    columns: Option<&[String]>,
    crs: Option<String>,
) -> Result<Layer, NativeError> {
    let declined = |why: &str| NativeError::Declined(format!("reading {why} in place"));
    let wanted: Option<Vec<&str>> = columns.map(|c| {
        c.iter()
            .map(String::as_str)
            .filter(|c| *c != GEOM)
            .collect()
    });
    let layer = read_geoparquet(&file.geoparquet, wanted.as_deref())?;
    if layer.geometry != file.geometry {
        return Err(declined("a geometry column the file does not declare"));
    }
    let names: Vec<&str> = layer
        .schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    if wanted
        .as_ref()
        .is_some_and(|w| w.iter().any(|c| !names.contains(c)))
    {
        return Err(declined("a column the file lacks"));
    }
    if file.geometry != GEOM && names.contains(&GEOM) {
        return Err(declined("a file with a second geom column"));
    }
    let keep: Vec<usize> = (0..names.len())
        .filter(|&i| names[i] != "OGC_FID")
        .collect();
    // Dictionary-encoded columns (pandas' categories) arrive decoded, as DuckDB gives them.
    let plain = |data_type: &DataType| match data_type {
        DataType::Dictionary(_, values) => values.as_ref().clone(),
        other => other.clone(),
    };
    let fields: Vec<arrow::datatypes::FieldRef> = keep
        .iter()
        .map(|&i| {
            let field = layer.schema.field(i);
            let name = if field.name() == &file.geometry {
                GEOM
            } else {
                field.name()
            };
            std::sync::Arc::new(
                field
                    .clone()
                    .with_name(name)
                    .with_data_type(plain(field.data_type())),
            )
        })
        .collect();
    let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(fields));
    let batches = layer
        .batches
        .iter()
        .map(|batch| {
            let columns = keep
                .iter()
                .zip(schema.fields())
                .map(|(&i, field)| {
                    let column = batch.column(i);
                    if column.data_type() == field.data_type() {
                        Ok(column.clone())
                    } else {
                        arrow::compute::cast(column, field.data_type()).map_err(NativeError::arrow)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            arrow::record_batch::RecordBatch::try_new(schema.clone(), columns)
                .map_err(NativeError::arrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, GEOM, crs)
}

/// A table's rows as a layer.
pub fn table_layer(
    engine: &EmbeddedEngine,
    table: &str,
    geometry: &str,
    crs: Option<String>,
) -> Result<Layer, NativeError> {
    query_layer(
        engine,
        &format!("SELECT * FROM {}", quoted(table)),
        geometry,
        crs,
    )
}

/// Writes a layer into DuckDB as table `table` (replaced), through a GeoParquet file in
/// `scratch` that is removed afterwards.
pub fn store_layer(
    engine: &EmbeddedEngine,
    layer: &Layer,
    table: &str,
    scratch: &Path,
) -> Result<(), NativeError> {
    let connection = engine
        .connection()
        .map_err(|e| NativeError::Transfer(e.to_string()))?;
    store_layer_on(&connection, layer, table, scratch, false)
}

/// Writes a layer as table `table` (replaced; `temporary`: a temporary table of `connection`)
/// through a GeoParquet file in `scratch` that is removed afterwards.
pub fn store_layer_on(
    connection: &duckdb::Connection,
    layer: &Layer,
    table: &str,
    scratch: &Path,
    temporary: bool,
) -> Result<(), NativeError> {
    // A file of its own per call: concurrent runs may store tables of the same name.
    static FILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = scratch.join(format!("native-{}-{n}.parquet", std::process::id()));
    write_geoparquet(layer, &file)?;
    let g = quoted(&layer.geometry);
    // DuckDB reads the GeoParquet column as GEOMETRY; the layer's CRS is set on the type.
    let select = match layer.crs.as_deref() {
        Some(crs) => format!("* REPLACE (ST_SetCRS({g}, {}) AS {g})", literal(crs)),
        None => "*".to_owned(),
    };
    let sql = format!(
        "CREATE OR REPLACE {}TABLE {} AS SELECT {select} FROM read_parquet({})",
        if temporary { "TEMP " } else { "" },
        quoted(table),
        literal(&file.to_string_lossy())
    );
    let outcome = connection
        .execute(&sql, [])
        .map(|_| ())
        .map_err(|e| NativeError::Transfer(e.to_string()));
    let _ = std::fs::remove_file(&file);
    outcome
}
