//! Running SQL on the embedded engine: statements on a connection of its own (temporary tables
//! and views are per connection, so concurrent runs do not meet) with the run's sources bound as
//! views, read-only queries under a time limit, and writing query results to files.

use geomill_planner::plan::operator::ExportFormat;
use geomill_planner::sql::quote::ident;
use geomill_planner::sql::{FgbIndex, duckdb_copy};

use super::EmbeddedEngine;
use super::parse::ensure_one_select;
use crate::BackendError;

const ENGINE: &str = "duckdb";

/// The rows of a server-written file's first layer, without GDAL's feature id (a GeoPackage
/// shows it as a `fid` column, which must not be written back as an attribute); read through
/// the allow-list of GDAL drivers like any file.
pub fn file_source(path: &str) -> String {
    format!(
        "(SELECT COLUMNS(c -> c <> 'fid') FROM {})",
        super::gdal_read::st_read(path, None, &[])
    )
}

/// A source name of a plan and the query giving its rows (a stored layer's, as the store
/// names it), bound as a temporary view of the connection that runs the plan.
#[derive(Debug, Clone)]
pub struct SourceView {
    pub name: String,
    pub rows: String,
    /// The GeoParquet file the stored layer is a view over, when it is read in place: a native
    /// stage reads the file itself instead of through DuckDB.
    pub in_place: Option<InPlaceParquet>,
}

/// A stored layer that is a view over a GeoParquet file: the file and its geometry column
/// (which the view names `geom`), kept as the view's comment.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InPlaceParquet {
    pub geoparquet: std::path::PathBuf,
    pub geometry: String,
    /// The LAS/LAZ file the GeoParquet is written from when a statement first reads it (it
    /// holds the columns only until then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_cloud: Option<std::path::PathBuf>,
}

impl EmbeddedEngine {
    /// A connection of its own to the database with `views` bound, for one run or query.
    pub(crate) fn run_connection(
        &self,
        views: &[SourceView],
    ) -> Result<duckdb::Connection, BackendError> {
        let connection = self
            .connection()?
            .try_clone()
            .map_err(|e| run_error("connect", &e))?;
        bind(&connection, views)?;
        Ok(connection)
    }
}

/// The rows of `table` on `connection` (`None` when there is nothing to count).
pub(crate) fn count_rows(
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
        .map_err(|e| run_error(&count, &e))
}

pub(crate) fn run_error(sql: &str, error: &duckdb::Error) -> BackendError {
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
    ensure_one_select(connection, &sql)?;
    let missing: i64 = connection
        .query_row(&sql, [], |r| r.get(0))
        .map_err(|e| run_error(&sql, &e))?;
    Ok(if missing > 0 {
        FgbIndex::Skip
    } else {
        FgbIndex::Build
    })
}

/// Writes `from` (a parenthesised query or a table) to `destination` in `format` on
/// `connection`; GDAL's refusals of the data (a Shapefile given two geometry types, say) are
/// [`BackendError::Unsupported`] naming the format.
pub(crate) fn copy_to_file(
    connection: &duckdb::Connection,
    from: &str,
    destination: &str,
    format: ExportFormat,
    layer: &str,
) -> Result<(), BackendError> {
    if let Some(refusal) = format.step_refusal() {
        return Err(BackendError::Unsupported(refusal));
    }
    // `from` may hold a console query: the COPY below reads `SELECT * FROM {from}` inside its
    // parentheses, so that text being one SELECT to DuckDB's parser makes the COPY one
    // statement (its lexer enters and leaves `from` in the same state either way).
    ensure_one_select(connection, &format!("SELECT * FROM {from}"))?;
    let index = fgb_index(connection, from, format)?;
    let copy = duckdb_copy(from, destination, format, Some(layer), index);
    connection.execute(&copy, []).map(drop).map_err(|e| {
        let reason = e.to_string();
        match format_limit(format, &reason) {
            Some(limit) => BackendError::Unsupported(limit),
            None => run_error(&copy, &e),
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
    /// Writes the first layer of the (trusted, server-written) file at `path` to `destination`.
    pub fn export_file(
        &self,
        path: &str,
        layer_name: &str,
        destination: &str,
        format: ExportFormat,
    ) -> Result<(), BackendError> {
        let from = file_source(path);
        let connection = self
            .connection()?
            .try_clone()
            .map_err(|e| run_error("connect", &e))?;
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
        views: &[SourceView],
        sql: &str,
        limit: usize,
        timeout: std::time::Duration,
    ) -> Result<QueryRows, BackendError> {
        let connection = self.run_connection(views)?;
        read_with_timeout(&connection, sql, limit, timeout)
    }

    /// Writes the result of a checked read-only `sql` over the bound layers to `destination`.
    pub fn export_query(
        &self,
        views: &[SourceView],
        sql: &str,
        destination: &str,
        format: ExportFormat,
    ) -> Result<(), BackendError> {
        let connection = self.run_connection(views)?;
        copy_to_file(
            &connection,
            &format!("({sql})"),
            destination,
            format,
            "query",
        )
    }
}

fn bind(connection: &duckdb::Connection, views: &[SourceView]) -> Result<(), BackendError> {
    for view in views {
        let view = format!(
            "CREATE OR REPLACE TEMP VIEW {} AS {}",
            ident(&view.name),
            view.rows
        );
        connection
            .execute(&view, [])
            .map_err(|e| run_error(&view, &e))?;
    }
    Ok(())
}

/// At most `limit` rows of `sql` on `connection`, interrupted after `timeout`.
pub fn read_with_timeout(
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
        let e = match e {
            ReadError::NotOneSelect(error) => return error,
            ReadError::Engine(e) => e,
        };
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

/// Why a query's rows could not be read.
enum ReadError {
    /// The text is not one SELECT statement to DuckDB's parser.
    NotOneSelect(BackendError),
    Engine(duckdb::Error),
}

impl From<duckdb::Error> for ReadError {
    fn from(error: duckdb::Error) -> Self {
        Self::Engine(error)
    }
}

/// Prepares `sql` once DuckDB's parser has read it as exactly one SELECT statement.
fn prepare_one<'c>(
    connection: &'c duckdb::Connection,
    sql: &str,
) -> Result<duckdb::Statement<'c>, ReadError> {
    ensure_one_select(connection, sql).map_err(ReadError::NotOneSelect)?;
    Ok(connection.prepare(sql)?)
}

fn read_rows(
    connection: &duckdb::Connection,
    sql: &str,
    limit: usize,
) -> Result<QueryRows, ReadError> {
    let describe = format!("DESCRIBE {sql}");
    let mut statement = prepare_one(connection, &describe)?;
    let columns = statement
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    let wrapped = format!(
        "SELECT CAST(to_json(q) AS VARCHAR) FROM ({sql}) AS q LIMIT {}",
        limit + 1
    );
    let mut statement = prepare_one(connection, &wrapped)?;
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
