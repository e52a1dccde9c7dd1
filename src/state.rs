//! The shared state every handler sees: configuration, the store and the engines, opened once
//! at start.

use std::sync::Arc;

use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::postgis::PostgisEngine;
use geomill_backends::store::postgres::PostgresStore;
use geomill_backends::store::{
    JobRepo, Repository, ScheduleRecord, Store, StoreLocation, TriggerRecord,
};

use crate::config::Config;

/// Memory the tile cache may hold.
const TILE_CACHE_BYTES: usize = 64 << 20;

/// Cheap to clone: everything sits behind one `Arc`.
#[derive(Clone, Debug)]
pub struct AppState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    /// The catalog and the stored layers.
    store: Arc<Store>,
    embedded: Arc<EmbeddedEngine>,
    /// PostgreSQL + PostGIS, when `GEOMILL_POSTGIS_DSN` is set.
    postgis: Option<PostgisEngine>,
    /// What the store keeps in PostgreSQL (projects, change tracking), with the same DSN.
    postgres_store: Option<PostgresStore>,
    /// Held while a remote layer is fetched, so each is fetched once.
    remote_loads: tokio::sync::Mutex<()>,
    jobs: crate::jobs::in_flight::JobRunner,
    /// Rule evaluations, for `/rules/eval-stream`.
    rule_events: tokio::sync::broadcast::Sender<serde_json::Value>,
    /// The rules, their names kept unique.
    rules: crate::rules::book::RuleBook,
    schedule_records: Arc<dyn Repository<ScheduleRecord>>,
    job_records: Arc<dyn JobRepo>,
    trigger_records: Arc<dyn Repository<TriggerRecord>>,
    tiles: crate::tile_cache::TileCache,
    sessions: crate::sessions::Sessions,
    auth: crate::auth::AuthState,
    events: crate::events::EventBus,
    /// Held while a schedule fires: one firing at a time.
    schedule_fires: tokio::sync::Mutex<()>,
    triggers: crate::triggers::TriggerRuntime,
    /// The example datasets, ingested on first use.
    examples: tokio::sync::OnceCell<Vec<crate::examples::example::Example>>,
}

/// Why the state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Engine(#[from] geomill_backends::BackendError),
    #[error(transparent)]
    Auth(#[from] crate::auth::AuthStartError),
}

impl AppState {
    /// Validates the configuration and opens the engines. Blocking: call before serving, or
    /// from `spawn_blocking`.
    pub fn open(config: Config) -> Result<Self, StartError> {
        config.validate()?;
        // Persistent and hybrid modes: the datasets and their catalog live in PostgreSQL.
        let store = match &config.postgis_dsn {
            Some(dsn) if config.engine.on_postgis() => StoreLocation::Postgis { dsn: dsn.clone() },
            _ => StoreLocation::Embedded,
        };
        // A query may spill to disk up to half the space free at start, and never into the
        // reserve /health watches: a runaway query fails instead of filling the disk.
        let free_mb = fs4::available_space(&config.data_dir).unwrap_or(0) / (1024 * 1024);
        let max_spill_mb = (free_mb / 2)
            .min(free_mb.saturating_sub(config.min_free_disk_mb))
            .max(64);
        let embedded = EmbeddedEngine::open(&EmbeddedOptions {
            database_path: (!config.store_in_memory).then(|| config.duckdb_path()),
            spill_directory: config
                .store_in_memory
                .then(|| config.data_dir.join("tmp").join("spill")),
            extension_directory: config.duckdb_extension_dir.clone(),
            max_spill_mb: Some(max_spill_mb),
            attachment: store.attachment(),
            sandbox: config.duckdb_sandbox(),
        })?;
        let embedded = Arc::new(embedded);
        let store = Arc::new(Store::open(Arc::clone(&embedded), store)?);
        // The pool connects on first use: a database that is down at start is reported by
        // /health and answered with 503s until it is back.
        let postgis = config
            .postgis_dsn
            .as_deref()
            .map(PostgisEngine::new)
            .transpose()?;
        let postgres_store = postgis.clone().map(PostgresStore::new);
        let auth = crate::auth::AuthState::open(&config.auth, &config.data_dir, config.port)?;
        let concurrency = usize::try_from(config.max_concurrent_jobs).unwrap_or(1);
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                rules: crate::rules::book::RuleBook::new(store.clone()),
                schedule_records: store.clone(),
                job_records: store.clone(),
                trigger_records: store.clone(),
                store,
                embedded,
                postgis,
                postgres_store,
                remote_loads: tokio::sync::Mutex::new(()),
                jobs: crate::jobs::in_flight::JobRunner::new(concurrency),
                rule_events: tokio::sync::broadcast::Sender::new(256),
                tiles: crate::tile_cache::TileCache::new(TILE_CACHE_BYTES),
                sessions: crate::sessions::Sessions::default(),
                auth,
                events: crate::events::EventBus::default(),
                schedule_fires: tokio::sync::Mutex::new(()),
                triggers: crate::triggers::TriggerRuntime::default(),
                examples: tokio::sync::OnceCell::new(),
            }),
        })
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The job runner: queue, feeds and controls of this server's jobs.
    pub fn jobs(&self) -> &crate::jobs::in_flight::JobRunner {
        &self.inner.jobs
    }

    /// Vector tiles served recently.
    pub fn tiles(&self) -> &crate::tile_cache::TileCache {
        &self.inner.tiles
    }

    /// Keys, session signing, licence and rate limiter.
    pub fn auth(&self) -> &crate::auth::AuthState {
        &self.inner.auth
    }

    /// The event bus behind `/ws/events`.
    pub fn events(&self) -> &crate::events::EventBus {
        &self.inner.events
    }

    /// The lock a schedule's firing holds.
    pub fn schedule_fires(&self) -> &tokio::sync::Mutex<()> {
        &self.inner.schedule_fires
    }

    /// The example datasets once loaded (see `crate::examples`).
    pub fn examples(&self) -> &tokio::sync::OnceCell<Vec<crate::examples::example::Example>> {
        &self.inner.examples
    }

    /// Trigger evaluations and the LISTEN loop's state.
    pub fn triggers(&self) -> &crate::triggers::TriggerRuntime {
        &self.inner.triggers
    }

    /// The live sessions.
    pub fn sessions(&self) -> &crate::sessions::Sessions {
        &self.inner.sessions
    }

    /// Where rule evaluations are announced.
    pub fn rule_events(&self) -> &tokio::sync::broadcast::Sender<serde_json::Value> {
        &self.inner.rule_events
    }

    /// The rules: read, and written with unique names.
    pub fn rules(&self) -> &crate::rules::book::RuleBook {
        &self.inner.rules
    }

    /// The job catalog.
    pub fn job_records(&self) -> Arc<dyn JobRepo> {
        Arc::clone(&self.inner.job_records)
    }

    /// The stored schedules.
    pub fn schedule_records(&self) -> Arc<dyn Repository<ScheduleRecord>> {
        Arc::clone(&self.inner.schedule_records)
    }

    /// The stored triggers.
    pub fn trigger_records(&self) -> Arc<dyn Repository<TriggerRecord>> {
        Arc::clone(&self.inner.trigger_records)
    }

    /// The lock taken while a lazily registered remote layer is fetched and loaded.
    pub fn remote_loads(&self) -> &tokio::sync::Mutex<()> {
        &self.inner.remote_loads
    }

    /// The PostGIS engine, when a DSN is configured.
    pub fn postgis(&self) -> Option<&PostgisEngine> {
        self.inner.postgis.as_ref()
    }

    /// The engine a run uses when it names none (`GEOMILL_ENGINE`).
    pub fn default_run_engine(&self) -> geomill_planner::optimizer::EngineMode {
        self.inner.config.engine
    }

    /// The store's part in PostgreSQL (projects, change tracking), when a DSN is configured.
    pub fn postgres_store(&self) -> Option<&PostgresStore> {
        self.inner.postgres_store.as_ref()
    }

    /// The catalog and the stored layers.
    pub fn store(&self) -> Arc<Store> {
        Arc::clone(&self.inner.store)
    }

    /// The embedded DuckDB engine (runs, SQL queries, exports of query results).
    pub fn embedded(&self) -> Arc<EmbeddedEngine> {
        Arc::clone(&self.inner.embedded)
    }

    /// The engine that runs pipelines in `mode`: DuckDB for `embedded` and `native`, PostGIS
    /// for `postgis` and `hybrid` (a 422 when the server has no PostGIS), DuckDB and the cluster
    /// for `distributed` (a 422 when the server has none).
    pub fn run_engine(
        &self,
        mode: geomill_planner::optimizer::EngineMode,
    ) -> Result<Arc<dyn geomill_backends::executor::Engine>, crate::error::AppError> {
        use geomill_backends::executor::{EmbeddedRuns, PostgisRuns};
        use geomill_planner::optimizer::EngineMode;
        if mode == EngineMode::Distributed {
            let cluster = self.cluster().ok_or_else(|| {
                crate::error::AppError::unprocessable(
                    "engine \"distributed\" needs GEOMILL_BALLISTA_URL (a cluster's scheduler), which this server was started without",
                )
            })?;
            return Ok(Arc::new(geomill_distributed::DistributedRuns {
                engine: self.embedded(),
                store: self.store(),
                cluster,
            }));
        }
        if !mode.on_postgis() {
            return Ok(Arc::new(EmbeddedRuns {
                engine: self.embedded(),
                store: self.store(),
                counts_each_step: mode == EngineMode::Embedded,
            }));
        }
        let postgis = self.postgis().cloned().ok_or_else(|| {
            crate::error::AppError::unprocessable(format!(
                "engine \"{}\" needs GEOMILL_POSTGIS_DSN, which this server was started without",
                mode.as_str()
            ))
        })?;
        Ok(Arc::new(PostgisRuns {
            postgis,
            embedded: self.embedded(),
            store: self.store(),
        }))
    }

    /// The engines this server runs: `embedded` and `native` always, `postgis` and `hybrid` with
    /// `GEOMILL_POSTGIS_DSN`, `distributed` with `GEOMILL_BALLISTA_URL`.
    pub fn offered_engines(&self) -> Vec<&'static str> {
        use geomill_planner::optimizer::EngineMode;
        EngineMode::ALL
            .into_iter()
            .filter(|mode| match mode {
                EngineMode::Distributed => self.cluster().is_some(),
                mode if mode.on_postgis() => self.postgis().is_some(),
                _ => true,
            })
            .map(EngineMode::as_str)
            .collect()
    }

    /// The cluster of the distributed engine (`GEOMILL_BALLISTA_URL`), if the server has one.
    pub fn cluster(&self) -> Option<geomill_distributed::ClusterSettings> {
        let config = self.config();
        let url = config.ballista_url.clone()?;
        Some(geomill_distributed::ClusterSettings {
            url,
            shared_dir: config
                .distributed_dir
                .clone()
                .unwrap_or_else(|| config.data_dir.join("distributed")),
            parts: usize::from(config.distributed_parts),
        })
    }
}
