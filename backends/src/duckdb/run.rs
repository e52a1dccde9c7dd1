//! Running a planned script on the embedded engine: a connection of its own (temporary tables
//! and views are per connection, so concurrent runs do not meet), the sources bound as views of
//! their layer tables, then every statement in order.

use geomill_planner::plan::operator::ExportFormat;
use geomill_planner::schema::{Column, FieldType, Schema};
use geomill_planner::sql::quote::{ident, string};
use geomill_planner::sql::{FgbIndex, duckdb_copy};

use super::EmbeddedEngine;
use super::store::LayerRecord;
use crate::BackendError;

const ENGINE: &str = "duckdb";

/// A source name of the plan bound to a stored layer.
#[derive(Debug, Clone)]
pub struct Binding {
    pub source: String,
    pub layer: LayerRecord,
}

/// One statement of a run.
#[derive(Debug, Clone, Default)]
pub struct ScriptStep {
    pub sql: String,
    /// The table the statement makes (`None` for an export, which makes none).
    pub makes: Option<String>,
    /// A table whose rows are counted after the statement.
    pub count: Option<String>,
    /// Set when the statement's stage runs natively; `sql` then runs only if a kernel declines
    /// the data.
    #[cfg(feature = "native")]
    pub native: Option<crate::native::stage::NativeStage>,
}

/// How a stage marked native ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeStepReport {
    /// The table the stage made.
    pub relation: String,
    /// `None`: by its kernels; otherwise why a kernel declined, and the stage ran as SQL.
    pub declined: Option<String>,
    /// Where the time of a stage its kernels ran went.
    #[cfg(feature = "native")]
    pub timings: Option<crate::native::stage::StageTimings>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result_rows: i64,
    /// For each statement, the rows of the table it made, when asked to count.
    pub rows_after: Vec<Option<i64>>,
    /// The stages marked native, in order.
    pub native: Vec<NativeStepReport>,
}

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

impl EmbeddedEngine {
    /// The planner's view of a stored layer: its columns and CRS.
    pub fn layer_schema(&self, layer: &LayerRecord) -> Result<Schema, BackendError> {
        let connection = self.connection()?;
        let sql = format!(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE {} ORDER BY column_index",
            self.store.layer_columns_filter(&layer.table_name)
        );
        let sql = sql.as_str();
        let mut statement = connection.prepare(sql).map_err(|e| query_error(sql, &e))?;
        let columns = statement
            .query_map([], |r| {
                Ok(Column {
                    name: r.get::<_, String>(0)?,
                    ty: field_type(&r.get::<_, String>(1)?),
                })
            })
            .map_err(|e| query_error(sql, &e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| query_error(sql, &e))?;
        Ok(Schema {
            columns,
            crs: layer.crs.clone(),
        })
    }

    /// Runs `statements` after binding the sources, on a fresh connection; `result` is the
    /// table to count and, with `result_file`, to write as a GeoPackage. `progress` hears
    /// (statements done, statements) before each statement; a statement paired with a table name
    /// has that table's rows counted after it.
    /// `interrupter`, when given, can stop the script from another thread.
    pub fn run_script(
        &self,
        bindings: &[Binding],
        statements: &[ScriptStep],
        result: &str,
        result_file: Option<&str>,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
        interrupter: Option<&Interrupter>,
    ) -> Result<RunOutcome, BackendError> {
        let connection = self
            .connection()?
            .try_clone()
            .map_err(|e| query_error("connect", &e))?;
        if let Some(interrupter) = interrupter {
            interrupter.attach(&connection);
        }
        let stopped = || interrupter.is_some_and(Interrupter::is_interrupted);
        let failed = |statement: &str, error: &duckdb::Error| {
            if stopped() {
                BackendError::Interrupted { engine: ENGINE }
            } else {
                query_error(statement, error)
            }
        };
        bind(&connection, &self.store, bindings)?;
        let mut rows_after = Vec::with_capacity(statements.len());
        let mut native = Vec::new();
        for (done, step) in statements.iter().enumerate() {
            if stopped() {
                return Err(BackendError::Interrupted { engine: ENGINE });
            }
            progress(done, statements.len());
            #[cfg(feature = "native")]
            if let Some(stage) = &step.native {
                let scratch = result_file
                    .and_then(|f| std::path::Path::new(f).parent())
                    .map_or_else(std::env::temp_dir, std::path::Path::to_path_buf);
                match crate::native::stage::run_on_duckdb(&connection, stage, &scratch) {
                    Ok(timings) => {
                        native.push(NativeStepReport {
                            relation: stage.relation.clone(),
                            declined: None,
                            timings: Some(timings),
                        });
                        rows_after.push(count_rows(&connection, step.count.as_deref())?);
                        continue;
                    }
                    Err(crate::native::NativeError::Unsupported(reason)) => {
                        native.push(NativeStepReport {
                            relation: stage.relation.clone(),
                            declined: Some(reason),
                            timings: None,
                        });
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            connection
                .execute_batch(&step.sql)
                .map_err(|e| failed(&step.sql, &e))?;
            rows_after.push(count_rows(&connection, step.count.as_deref())?);
        }
        if stopped() {
            return Err(BackendError::Interrupted { engine: ENGINE });
        }
        let count = format!("SELECT count(*) FROM {}", ident(result));
        let result_rows: i64 = connection
            .query_row(&count, [], |r| r.get(0))
            .map_err(|e| failed(&count, &e))?;
        if let Some(file) = result_file {
            let copy = format!(
                "COPY (SELECT * FROM {}) TO {} (FORMAT GDAL, DRIVER 'GPKG', LAYER_NAME 'result')",
                ident(result),
                string(file)
            );
            connection
                .execute_batch(&copy)
                .map_err(|e| failed(&copy, &e))?;
        }
        Ok(RunOutcome {
            result_rows,
            rows_after,
            native,
        })
    }
}

/// The rows of `table` on `connection` (`None` when there is nothing to count).
fn count_rows(
    connection: &duckdb::Connection,
    table: Option<&str>,
) -> Result<Option<i64>, BackendError> {
    let Some(table) = table else {
        return Ok(None);
    };
    let count = format!("SELECT count(*) FROM {}", ident(table));
    connection
        .query_row(&count, [], |r| r.get::<_, i64>(0))
        .map(Some)
        .map_err(|e| query_error(&count, &e))
}

/// Stops a running script from another thread: before its next statement, and during one
/// through DuckDB's interrupt. Call [`Interrupter::interrupt`] again until the run returns: an
/// interrupt that lands between two statements is otherwise only seen at the next one.
#[derive(Default)]
pub struct Interrupter {
    stopped: std::sync::atomic::AtomicBool,
    handle: std::sync::Mutex<Option<std::sync::Arc<duckdb::InterruptHandle>>>,
}

impl std::fmt::Debug for Interrupter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupter")
            .field("stopped", &self.is_interrupted())
            .finish_non_exhaustive()
    }
}

impl Interrupter {
    pub fn interrupt(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Ok(handle) = self.handle.lock()
            && let Some(handle) = handle.as_ref()
        {
            handle.interrupt();
        }
    }

    pub fn is_interrupted(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn attach(&self, connection: &duckdb::Connection) {
        if let Ok(mut handle) = self.handle.lock() {
            *handle = Some(connection.interrupt_handle());
        }
    }
}

fn query_error(sql: &str, error: &duckdb::Error) -> BackendError {
    BackendError::Query {
        engine: ENGINE,
        reason: error.to_string(),
        sql: sql.to_owned(),
    }
}

/// The FlatGeobuf index `from` can have: none when a geometry is NULL or empty (GDAL cannot
/// index those); for other formats the answer does not matter.
fn fgb_index(
    connection: &duckdb::Connection,
    from: &str,
    format: ExportFormat,
) -> Result<FgbIndex, BackendError> {
    if format != ExportFormat::Fgb {
        return Ok(FgbIndex::Build);
    }
    let sql =
        format!("SELECT count(*) FROM {from} AS t WHERE t.geom IS NULL OR ST_IsEmpty(t.geom)");
    let missing: i64 = connection
        .query_row(&sql, [], |r| r.get(0))
        .map_err(|e| query_error(&sql, &e))?;
    Ok(if missing > 0 {
        FgbIndex::Skip
    } else {
        FgbIndex::Build
    })
}

/// Writes `from` (a parenthesised query or a table) to `destination` in `format` on
/// `connection`; GDAL's refusals of the data (a Shapefile given two geometry types, say) are
/// [`BackendError::Unsupported`] naming the format.
fn copy_to_file(
    connection: &duckdb::Connection,
    from: &str,
    destination: &str,
    format: ExportFormat,
    layer: &str,
) -> Result<(), BackendError> {
    let index = fgb_index(connection, from, format)?;
    let copy = duckdb_copy(from, destination, format, Some(layer), index);
    connection.execute_batch(&copy).map_err(|e| {
        let reason = e.to_string();
        match format_limit(format, &reason) {
            Some(limit) => BackendError::Unsupported(limit),
            None => query_error(&copy, &e),
        }
    })
}

/// What a GDAL write error says about a limit of the format, in words for the user.
fn format_limit(format: ExportFormat, reason: &str) -> Option<String> {
    let name = format.as_str();
    if reason.contains("Attempt to write non-") {
        return Some(format!(
            "{name}: a Shapefile holds one geometry type and this layer has several \
             (GDAL: {}); export to gpkg, geojson or fgb, or filter the layer by type first",
            reason.trim_start_matches("IO Error: ")
        ));
    }
    let gdal_refusal = [
        "ICreateFeature",
        "CreateField",
        "not supported",
        "Failed to create",
    ];
    gdal_refusal.iter().any(|m| reason.contains(m)).then(|| {
        format!(
            "the {name} format cannot hold this layer (GDAL: {})",
            reason.trim_start_matches("IO Error: ")
        )
    })
}

impl EmbeddedEngine {
    /// Writes a stored layer to `destination` in `format` (for Shapefiles, a folder that gets
    /// `<layer>.shp` and its companions).
    pub fn export_layer(
        &self,
        layer: &LayerRecord,
        destination: &str,
        format: ExportFormat,
    ) -> Result<(), BackendError> {
        let from = format!("({})", self.store.layer_rows(&layer.table_name));
        copy_to_file(
            &*self.connection()?,
            &from,
            destination,
            format,
            &layer.name,
        )
    }

    /// Writes the first layer of the (trusted, server-written) file at `path` to `destination`.
    pub fn export_file(
        &self,
        path: &str,
        layer_name: &str,
        destination: &str,
        format: ExportFormat,
    ) -> Result<(), BackendError> {
        let from = super::results::file_source(path);
        let connection = self
            .connection()?
            .try_clone()
            .map_err(|e| query_error("connect", &e))?;
        copy_to_file(&connection, &from, destination, format, layer_name)
    }
}

/// Rows of a read-only query.
#[derive(Debug, Clone)]
pub struct QueryRows {
    /// (name, DuckDB type) of each column.
    pub columns: Vec<(String, String)>,
    /// Each row as a JSON object (geometries as WKT).
    pub rows: Vec<String>,
    /// More rows existed than the limit.
    pub truncated: bool,
}

impl EmbeddedEngine {
    /// Runs a checked read-only `sql` over the bound layers on a connection of its own, at most
    /// `limit` rows, interrupted after `timeout`.
    pub fn query_rows(
        &self,
        bindings: &[Binding],
        sql: &str,
        limit: usize,
        timeout: std::time::Duration,
    ) -> Result<QueryRows, BackendError> {
        let connection = self
            .connection()?
            .try_clone()
            .map_err(|e| query_error("connect", &e))?;
        bind(&connection, &self.store, bindings)?;
        read_with_timeout(&connection, sql, limit, timeout)
    }

    /// Writes the result of a checked read-only `sql` over the bound layers to `destination`.
    pub fn export_query(
        &self,
        bindings: &[Binding],
        sql: &str,
        destination: &str,
        format: ExportFormat,
    ) -> Result<(), BackendError> {
        let connection = self
            .connection()?
            .try_clone()
            .map_err(|e| query_error("connect", &e))?;
        bind(&connection, &self.store, bindings)?;
        copy_to_file(
            &connection,
            &format!("({sql})"),
            destination,
            format,
            "query",
        )
    }
}

fn bind(
    connection: &duckdb::Connection,
    store: &super::StoreLocation,
    bindings: &[Binding],
) -> Result<(), BackendError> {
    for binding in bindings {
        let view = format!(
            "CREATE OR REPLACE TEMP VIEW {} AS {}",
            ident(&binding.source),
            store.layer_rows(&binding.layer.table_name)
        );
        connection
            .execute_batch(&view)
            .map_err(|e| query_error(&view, &e))?;
    }
    Ok(())
}

/// At most `limit` rows of `sql` on `connection`, interrupted after `timeout`.
pub(super) fn read_with_timeout(
    connection: &duckdb::Connection,
    sql: &str,
    limit: usize,
    timeout: std::time::Duration,
) -> Result<QueryRows, BackendError> {
    let interrupt = connection.interrupt_handle();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(timeout).is_err() {
            interrupt.interrupt();
        }
    });
    let outcome = read_rows(connection, sql, limit);
    let _ = done.send(());
    let _ = watchdog.join();
    outcome.map_err(|e| {
        let reason = if e.to_string().contains("INTERRUPT") || e.to_string().contains("nterrupt") {
            format!(
                "the query ran longer than {} s and was stopped",
                timeout.as_secs()
            )
        } else {
            e.to_string()
        };
        BackendError::Query {
            engine: ENGINE,
            reason,
            sql: sql.to_owned(),
        }
    })
}

fn read_rows(
    connection: &duckdb::Connection,
    sql: &str,
    limit: usize,
) -> Result<QueryRows, duckdb::Error> {
    let describe = format!("DESCRIBE {sql}");
    let mut statement = connection.prepare(&describe)?;
    let columns = statement
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    let wrapped = format!(
        "SELECT CAST(to_json(q) AS VARCHAR) FROM ({sql}) AS q LIMIT {}",
        limit + 1
    );
    let mut statement = connection.prepare(&wrapped)?;
    let mut rows = statement
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let truncated = rows.len() > limit;
    rows.truncate(limit);
    Ok(QueryRows {
        columns,
        rows,
        truncated,
    })
}
