//! The lock on the embedded database: after its extensions are loaded, DuckDB itself refuses
//! every file outside the folders the server works in (reads, `COPY … TO`, `ATTACH`, GDAL's
//! `/vsi…` paths, globs), every extension install or load, and any later change of these
//! settings. A second door behind the SQL guard and the expression printer: SQL that got past
//! them still cannot reach the server's files.

use std::path::{Path, PathBuf};

use duckdb::Connection;
use geomill_planner::sql::quote::string;

/// Extensions loaded before the lock (none can be loaded after it): `spatial` is loaded by
/// `open`; `sqlite` writes styles into exported GeoPackages.
const PRELOADED: &[&str] = &["sqlite"];

/// Locks the database `connection` belongs to: only `directories` (and what is below them)
/// can be read or written.
pub(crate) fn lock(connection: &Connection, directories: &[PathBuf]) -> Result<(), String> {
    for extension in PRELOADED {
        if let Err(error) = connection.execute(&format!("LOAD {extension}"), []) {
            tracing::warn!(%error, extension, "extension not loadable before the lock");
        }
    }
    let allowed: Vec<String> = directories
        .iter()
        .map(|dir| string(&directory_text(dir)))
        .collect();
    for setting in [
        format!("SET allowed_directories = [{}]", allowed.join(", ")),
        "SET enable_external_access = false".to_owned(),
        "SET autoinstall_known_extensions = false".to_owned(),
        "SET autoload_known_extensions = false".to_owned(),
        "SET allow_community_extensions = false".to_owned(),
        "SET lock_configuration = true".to_owned(),
    ] {
        connection
            .execute(&setting, [])
            .map_err(|e| format!("{setting}: {e}"))?;
    }
    Ok(())
}

/// A directory as DuckDB's `allowed_directories` matches it: absolute, ending with `/` (a
/// prefix `data/up` would otherwise also allow `data/upper`).
fn directory_text(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let text = absolute.to_string_lossy();
    if text.ends_with('/') {
        text.into_owned()
    } else {
        format!("{text}/")
    }
}
