//! What the PostgreSQL store answers itself, over the PostGIS engine's pool: pages of stored
//! layers through their GiST index, projects (a schema each), and change tracking of tables
//! (triggers writing a change log, and the LISTEN loop that hears of new rows).

mod features;
mod projects;
mod tracking;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::postgis::PostgisEngine;

pub use projects::{ProjectError, ProjectLayer, ProjectRecord, valid_project_name};
pub use tracking::{CHANNEL, ChangeListener, LoggedChange, TrackedTable, qualified};

/// The store's part in PostgreSQL, reached through the PostGIS engine's connections.
#[derive(Clone)]
pub struct PostgresStore {
    postgis: PostgisEngine,
    /// Set once the `geomill` catalog schema is known to exist.
    catalog_ready: Arc<AtomicBool>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

impl PostgresStore {
    pub fn new(postgis: PostgisEngine) -> Self {
        Self {
            postgis,
            catalog_ready: Arc::default(),
        }
    }

    /// The database's connection string (DuckDB attaches it to copy layers in).
    pub fn dsn(&self) -> &str {
        self.postgis.dsn()
    }
}
