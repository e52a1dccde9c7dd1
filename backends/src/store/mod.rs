//! The store: the catalog (datasets and their layers, jobs, rules, schedules, scenarios,
//! triggers, sessions, publications, change tracking) and the stored layers themselves, with
//! the reads served from them (features, tiles, extents, field statistics). It keeps them in
//! the embedded DuckDB database file (portable mode) or in PostgreSQL + PostGIS (persistent
//! mode: the catalog of datasets and the layers, attached to DuckDB through its `postgres`
//! extension; `postgres/` for what PostgreSQL answers itself). The engines only execute.

mod catalog_cache;
mod datasets;
mod features;
mod fields;
mod jobs;
mod layers;
mod load;
mod location;
mod ogc;
#[cfg(feature = "postgis")]
pub mod postgres;
mod published;
mod records;
mod remote;
mod repository;
mod results;
mod rules;
mod scenarios;
mod schedules;
mod schema;
mod sessions;
mod styles;
mod tracking;
mod triggers;

use std::sync::{Arc, MutexGuard};

use duckdb::Connection;

use crate::BackendError;
use crate::duckdb::{EmbeddedEngine, InPlaceParquet, SourceView};

pub use features::{FeaturePage, OutputCrs, lon_lat_geometry};
pub use fields::FieldStats;
pub use jobs::{JobRecord, JobRepo};
pub use location::{PG_CATALOG_SCHEMA, PG_LAYER_SCHEMA, StoreLocation};
pub use ogc::{MAX_TILE_LATITUDE, tile_bounds};
pub use published::Publication;
pub use records::{DatasetRecord, LayerRecord, Reader, RejectedFile, RemoteLayer, SourceFile};
pub use repository::Repository;
pub use rules::RuleRecord;
pub use scenarios::ScenarioRecord;
pub use schedules::ScheduleRecord;
pub use tracking::{ChangedRow, LoggedLayerChange, TrackedLayer};
pub use triggers::TriggerRecord;

/// A source name of a plan bound to a stored layer.
#[derive(Debug, Clone)]
pub struct Binding {
    pub source: String,
    pub layer: LayerRecord,
}

/// The catalog and the stored layers, kept in the embedded database (which, in persistent
/// mode, has the PostgreSQL store attached: see [`StoreLocation::attachment`]).
pub struct Store {
    engine: Arc<EmbeddedEngine>,
    location: StoreLocation,
    /// Catalog records read recently; cleared by every catalog write.
    catalog: catalog_cache::CatalogCache,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// The store kept in `engine`'s database at `location` (the engine opened with
    /// `location.attachment()`), its tables created when missing.
    pub fn open(
        engine: Arc<EmbeddedEngine>,
        location: StoreLocation,
    ) -> Result<Self, BackendError> {
        let store = Self {
            engine,
            location,
            catalog: catalog_cache::CatalogCache::default(),
        };
        store.init_store()?;
        Ok(store)
    }

    /// Where the catalog and the layers live.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// The views a run binds its sources as: each source's stored layer, as the store names it,
    /// and the file it is read from when it is a view over a GeoParquet file.
    pub fn source_views(&self, bindings: &[Binding]) -> Vec<SourceView> {
        let in_place = self.in_place_files().unwrap_or_default();
        bindings
            .iter()
            .map(|b| SourceView {
                name: b.source.clone(),
                rows: self.location.layer_rows(&b.layer.table_name),
                in_place: in_place.get(&b.layer.table_name).cloned(),
            })
            .collect()
    }

    /// The stored layers that are views over GeoParquet files (their comments), by table.
    fn in_place_files(
        &self,
    ) -> Result<std::collections::HashMap<String, InPlaceParquet>, BackendError> {
        if self.location.is_postgis() {
            return Ok(Default::default());
        }
        let connection = self.reader()?;
        let sql = "SELECT view_name, comment FROM duckdb_views() \
                   WHERE schema_name = 'layers' AND comment IS NOT NULL";
        let mut statement = connection
            .prepare(sql)
            .map_err(crate::duckdb::query_error(sql))?;
        let rows = statement
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(crate::duckdb::query_error(sql))?;
        Ok(rows
            .filter_map(Result::ok)
            .filter_map(|(table, comment)| Some((table, serde_json::from_str(&comment).ok()?)))
            .collect())
    }

    fn connection(&self) -> Result<MutexGuard<'_, Connection>, BackendError> {
        self.engine.connection()
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, BackendError> {
        self.engine.lock()
    }

    fn reader(&self) -> Result<Connection, BackendError> {
        self.engine.reader()
    }

    fn execute_batch(&self, sql: &str) -> Result<(), BackendError> {
        self.engine.execute_batch(sql)
    }

    fn query_i64(&self, sql: &str) -> Result<i64, BackendError> {
        self.engine.query_i64(sql)
    }
}
