//! Opening the embedded DuckDB database, loading `spatial`, and checking that it answers.

use std::path::PathBuf;
use std::sync::Mutex;

use duckdb::Connection;

use crate::BackendError;

const ENGINE: &str = "duckdb";

/// Where the embedded database lives and where DuckDB finds its extensions.
#[derive(Debug, Clone, Default)]
pub struct EmbeddedOptions {
    /// The database file; `None` keeps everything in memory.
    pub database_path: Option<PathBuf>,
    /// Where DuckDB spills what does not fit in memory (default: beside the database file; an
    /// in-memory database has no such place and needs one to spill).
    pub spill_directory: Option<PathBuf>,
    /// Overrides DuckDB's extension directory (default `~/.duckdb/extensions`).
    pub extension_directory: Option<PathBuf>,
    /// The most a query may spill to disk, in MiB (DuckDB's default is 90 % of the free space:
    /// a query that spills without end would fill the disk).
    pub max_spill_mb: Option<u64>,
    /// A PostgreSQL database every connection sees (the store in persistent mode).
    pub attachment: Option<Attachment>,
    /// When set, the database is locked once its extensions are loaded (`lock.rs`): DuckDB
    /// then reads and writes files only below these directories, loads no extension and
    /// refuses to change its settings. Not with `attachment`: DuckDB attaches no PostgreSQL
    /// database once external access is off.
    pub sandbox: Option<Vec<PathBuf>>,
}

/// A PostgreSQL database attached to the embedded one through DuckDB's `postgres` extension,
/// under a fixed alias, with statements run there once attached (the store's tables, created
/// when missing). Attached on first use, so a database that is down at start is reported per
/// request and picked up once back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub dsn: String,
    pub alias: String,
    /// PostgreSQL statements run after each attachment.
    pub setup: String,
}

/// The error of a statement DuckDB refused.
pub(crate) fn query_error(sql: &str) -> impl Fn(duckdb::Error) -> BackendError + '_ {
    move |e| BackendError::Query {
        engine: ENGINE,
        reason: e.to_string(),
        sql: sql.to_owned(),
    }
}

/// What a health check learned about the spatial extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpatialStatus {
    pub duckdb_version: String,
    pub spatial_version: String,
}

/// One DuckDB database with `spatial` loaded. The connection is not `Sync`, so callers share
/// it through a mutex and run on blocking threads, never on the async runtime's threads.
pub struct EmbeddedEngine {
    connection: Mutex<Connection>,
    /// The PostgreSQL database every connection sees, if any.
    attachment: Option<Attachment>,
    /// Whether the attachment is in place.
    store_attached: std::sync::atomic::AtomicBool,
    /// The loaded spatial extension's version, read at open (a locked database cannot list
    /// its extension directory afterwards).
    spatial_version: Option<String>,
}

impl std::fmt::Debug for EmbeddedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedEngine").finish_non_exhaustive()
    }
}

/// DuckDB's settings at open: a database that will be locked and whose extensions are the pinned
/// releases skips DuckDB's signature check and loads nothing on its own (`extensions.rs`).
fn open_config(options: &EmbeddedOptions) -> duckdb::Result<duckdb::Config> {
    let config = duckdb::Config::default();
    let locked = options.sandbox.is_some() && options.attachment.is_none();
    if !locked
        || !super::extensions::all_pinned(
            options.extension_directory.as_deref(),
            super::extensions::LOADED_BEFORE_LOCK,
        )
    {
        return Ok(config);
    }
    config
        .allow_unsigned_extensions()?
        .enable_autoload_extension(false)
}

impl EmbeddedEngine {
    /// Opens (or creates) the database and loads `spatial`: `LOAD` first, and only if that
    /// fails `INSTALL` then `LOAD` (which needs DuckDB's extension repository to be reachable).
    pub fn open(options: &EmbeddedOptions) -> Result<Self, BackendError> {
        let open_error = |reason: String| BackendError::Open {
            engine: ENGINE,
            reason,
        };
        let config = open_config(options).map_err(|e| open_error(e.to_string()))?;
        let connection = match &options.database_path {
            Some(path) => Connection::open_with_flags(path, config),
            None => Connection::open_in_memory_with_flags(config),
        }
        .map_err(|e| open_error(e.to_string()))?;
        if let Some(dir) = &options.extension_directory {
            let dir = dir.to_string_lossy().replace('\'', "''");
            connection
                .execute_batch(&format!("SET extension_directory = '{dir}'"))
                .map_err(|e| open_error(format!("extension_directory: {e}")))?;
        }
        if let Some(dir) = &options.spill_directory {
            let dir = dir.to_string_lossy().replace('\'', "''");
            connection
                .execute_batch(&format!("SET temp_directory = '{dir}'"))
                .map_err(|e| open_error(format!("temp_directory: {e}")))?;
        }
        if let Some(mb) = options.max_spill_mb {
            connection
                .execute_batch(&format!("SET max_temp_directory_size = '{mb}MiB'"))
                .map_err(|e| open_error(format!("max_temp_directory_size: {e}")))?;
        }
        if let Err(load_error) = connection.execute_batch("LOAD spatial") {
            tracing::info!(%load_error, "spatial extension not loadable, trying INSTALL spatial");
            connection
                .execute_batch("INSTALL spatial; LOAD spatial")
                .map_err(|install_error| {
                    open_error(format!(
                        "the spatial extension is missing (LOAD: {load_error}; INSTALL: {install_error}); \
                         run scripts/setup.sh to install it"
                    ))
                })?;
        }
        super::functions::register(&connection)
            .map_err(|e| open_error(format!("registering geomill's SQL functions: {e}")))?;
        let spatial_version = connection
            .query_row(
                "SELECT extension_version FROM duckdb_extensions() \
                 WHERE extension_name = 'spatial' AND loaded",
                [],
                |r| r.get::<_, Option<String>>(0),
            )
            .ok()
            .flatten();
        if let Some(directories) = &options.sandbox {
            if options.attachment.is_some() {
                return Err(open_error(
                    "a locked database cannot attach PostgreSQL: leave `sandbox` unset".into(),
                ));
            }
            super::lock::lock(&connection, directories)
                .map_err(|e| open_error(format!("locking the database: {e}")))?;
        }
        Ok(Self {
            connection: Mutex::new(connection),
            attachment: options.attachment.clone(),
            store_attached: std::sync::atomic::AtomicBool::new(false),
            spatial_version,
        })
    }

    /// Attaches the PostgreSQL database when it is not yet; every connection of the database
    /// sees an attachment. PostgreSQL unreachable is `Unavailable`.
    fn attach_store(&self, connection: &Connection) -> Result<(), BackendError> {
        use std::sync::atomic::Ordering;
        let Some(Attachment { dsn, alias, setup }) = &self.attachment else {
            return Ok(());
        };
        if self.store_attached.load(Ordering::Acquire) {
            // One round trip proves the attachment's connection is alive; after PostgreSQL
            // restarted it is not, and the store is attached afresh.
            let probe = format!("CALL postgres_execute('{alias}', 'SELECT 1')");
            if connection.execute_batch(&probe).is_ok() {
                return Ok(());
            }
            let _ = connection.execute_batch(&format!("DETACH DATABASE IF EXISTS {alias}"));
            self.store_attached.store(false, Ordering::Release);
        }
        let attach = format!(
            "LOAD postgres; ATTACH IF NOT EXISTS {} AS {alias} (TYPE postgres)",
            geomill_planner::sql::quote::string(dsn),
        );
        connection
            .execute_batch(&attach)
            .map_err(|e| BackendError::Unavailable {
                engine: "postgis",
                // The statement holds the DSN (maybe a password): not kept in the error.
                reason: format!("cannot reach the PostgreSQL store: {e}"),
            })?;
        // The catalog's tables, created in PostgreSQL when missing; then DuckDB reads the
        // schemas afresh.
        let ddl = format!(
            "CALL postgres_execute('{alias}', {}); CALL pg_clear_cache();",
            geomill_planner::sql::quote::string(setup),
        );
        if let Err(e) = connection.execute_batch(&ddl) {
            let _ = connection.execute_batch(&format!("DETACH DATABASE IF EXISTS {alias}"));
            return Err(BackendError::Unavailable {
                engine: "postgis",
                reason: format!("cannot create the catalog in PostgreSQL: {e}"),
            });
        }
        self.store_attached.store(true, Ordering::Release);
        Ok(())
    }

    /// The shared connection, held until the guard drops.
    pub(crate) fn connection(&self) -> Result<std::sync::MutexGuard<'_, Connection>, BackendError> {
        let connection = self.lock()?;
        self.attach_store(&connection)?;
        Ok(connection)
    }

    /// A connection of its own to the same database, for a read that should not wait for (or
    /// hold up) the shared connection.
    pub(crate) fn reader(&self) -> Result<Connection, BackendError> {
        let connection = self.lock()?;
        self.attach_store(&connection)?;
        connection
            .try_clone()
            .map_err(|e| BackendError::Unavailable {
                engine: ENGINE,
                reason: format!("cannot open a connection: {e}"),
            })
    }

    /// The shared connection without the PostgreSQL store (local tables only).
    pub(crate) fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, BackendError> {
        self.connection
            .lock()
            .map_err(|_| BackendError::Unavailable {
                engine: ENGINE,
                reason: "connection poisoned by an earlier failure".into(),
            })
    }

    /// Runs a script of statements (no results).
    pub fn execute_batch(&self, sql: &str) -> Result<(), BackendError> {
        self.connection()?
            .execute_batch(sql)
            .map_err(|e| BackendError::Query {
                engine: ENGINE,
                reason: e.to_string(),
                sql: sql.to_owned(),
            })
    }

    /// Runs a query returning one integer (a count, typically).
    pub fn query_i64(&self, sql: &str) -> Result<i64, BackendError> {
        self.connection()?
            .query_row(sql, [], |row| row.get::<_, i64>(0))
            .map_err(|e| BackendError::Query {
                engine: ENGINE,
                reason: e.to_string(),
                sql: sql.to_owned(),
            })
    }

    /// Runs a spatial function end to end and reports the versions in use.
    pub fn check_spatial(&self) -> Result<SpatialStatus, BackendError> {
        let sql = "SELECT version(), ST_Area(ST_Buffer(ST_Point(0, 0), 1.0)) > 3.0";
        let connection = self
            .connection
            .lock()
            .map_err(|_| BackendError::Unavailable {
                engine: ENGINE,
                reason: "connection poisoned by an earlier failure".into(),
            })?;
        let query_error = |e: duckdb::Error| BackendError::Query {
            engine: ENGINE,
            reason: e.to_string(),
            sql: sql.to_owned(),
        };
        let (duckdb_version, area_ok) = connection
            .query_row(sql, [], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, bool>(1)?))
            })
            .map_err(query_error)?;
        match (self.spatial_version.clone(), area_ok) {
            (Some(spatial_version), true) => Ok(SpatialStatus {
                duckdb_version,
                spatial_version,
            }),
            (None, _) => Err(BackendError::Unavailable {
                engine: ENGINE,
                reason: "the spatial extension is not loaded".into(),
            }),
            (Some(_), false) => Err(BackendError::Unavailable {
                engine: ENGINE,
                reason: "ST_Buffer/ST_Area returned a wrong area".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_engine_loads_spatial_and_answers() -> Result<(), BackendError> {
        let engine = EmbeddedEngine::open(&EmbeddedOptions::default())?;
        let status = engine.check_spatial()?;
        assert_eq!(status.duckdb_version, "v1.5.5");
        assert!(!status.spatial_version.is_empty());
        Ok(())
    }

    #[test]
    fn file_engine_persists_between_opens() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let options = EmbeddedOptions {
            database_path: Some(dir.path().join("db.duckdb")),
            extension_directory: None,
            max_spill_mb: None,
            ..EmbeddedOptions::default()
        };
        {
            let engine = EmbeddedEngine::open(&options)?;
            let connection = engine.connection.lock().map_err(|_| "poisoned")?;
            connection.execute_batch("CREATE TABLE t AS SELECT ST_Point(1, 2) AS geom")?;
        }
        let engine = EmbeddedEngine::open(&options)?;
        let connection = engine.connection.lock().map_err(|_| "poisoned")?;
        let text: String =
            connection.query_row("SELECT ST_AsText(geom) FROM t", [], |r| r.get(0))?;
        assert_eq!(text, "POINT (1 2)");
        Ok(())
    }

    #[test]
    fn a_locked_database_on_the_pinned_releases_skips_only_the_signature_check()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let locked = EmbeddedOptions {
            sandbox: Some(vec![dir.path().to_path_buf()]),
            ..EmbeddedOptions::default()
        };
        let pinned = super::super::extensions::all_pinned(
            None,
            super::super::extensions::LOADED_BEFORE_LOCK,
        );
        let setting = |engine: &EmbeddedEngine,
                       name: &str|
         -> Result<bool, Box<dyn std::error::Error>> {
            let connection = engine.connection.lock().map_err(|_| "poisoned")?;
            Ok(
                connection.query_row(&format!("SELECT current_setting('{name}')"), [], |r| {
                    r.get::<_, bool>(0)
                })?,
            )
        };
        let engine = EmbeddedEngine::open(&locked)?;
        assert!(engine.check_spatial().is_ok());
        assert_eq!(setting(&engine, "allow_unsigned_extensions")?, pinned);
        assert!(!setting(&engine, "autoload_known_extensions")?);
        // Locked: no extension loads after open, signed or not.
        let connection = engine.connection.lock().map_err(|_| "poisoned")?;
        assert!(connection.execute_batch("LOAD postgres").is_err());
        drop(connection);
        // Not locked: DuckDB's own check, whatever the files.
        let open = EmbeddedEngine::open(&EmbeddedOptions::default())?;
        assert!(!setting(&open, "allow_unsigned_extensions")?);
        Ok(())
    }

    #[test]
    fn a_missing_extension_directory_is_a_clear_open_error() -> Result<(), std::io::Error> {
        let empty = tempfile::tempdir()?;
        let options = EmbeddedOptions {
            database_path: None,
            extension_directory: Some(empty.path().to_path_buf()),
            max_spill_mb: None,
            ..EmbeddedOptions::default()
        };
        // LOAD fails, then INSTALL fails (no repository reachable or no write access): the
        // error must name the extension and the set-up script. On a machine with internet
        // access INSTALL may succeed, which is also correct behaviour.
        match EmbeddedEngine::open(&options) {
            Ok(engine) => assert!(engine.check_spatial().is_ok()),
            Err(error) => assert!(error.to_string().contains("spatial extension is missing")),
        }
        Ok(())
    }
}
