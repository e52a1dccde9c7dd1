//! A run's steps on PostGIS (engines `postgis` and `hybrid`), walked with the stages the
//! planner gave the native backend in between. The SQL between two native stages runs as one
//! script on one connection; the tables it makes are kept as ordinary tables of the run's
//! schema, so that the native stage (reading through DuckDB's postgres extension) and the
//! scripts after it (on other connections of the pool) read them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use geomill_planner::schema::GEOM;
use geomill_planner::sql::quote::ident;
use tokio::runtime::Handle;

use super::arrow::{query_layer, select_list, store_layer};
use super::cancel::Cancel;
use super::steps::{NativeStepReport, ScriptStep};
use super::walk::{TableEngine, walk};
use crate::BackendError;
use crate::duckdb::EmbeddedEngine;
use crate::postgis::PostgisEngine;
use geomill_native::stage::OnThisMachine;
use geomill_native::{Layer, NativeError};

const ENGINE: &str = "postgis";

/// Where and how a run on PostGIS executes.
pub struct HybridRun<'a> {
    pub postgis: &'a PostgisEngine,
    /// Moves rows between PostgreSQL and the kernels.
    pub embedded: Arc<EmbeddedEngine>,
    /// The schema the run's tables live in (first on the search path).
    pub schema: &'a str,
    /// Where the native stages write their temporary files.
    pub scratch: &'a Path,
}

/// What a hybrid run did: how each native stage ran, and the kept tables a last native stage
/// left in the embedded database instead of PostgreSQL (`(kept name, embedded table)`; the
/// caller writes them out and drops them).
#[derive(Debug, Default)]
pub struct HybridOutcome {
    pub native: Vec<NativeStepReport>,
    pub local: Vec<(String, String)>,
}

/// The run's schema in PostgreSQL as the walk sees it.
struct PostgisTables {
    postgis: PostgisEngine,
    embedded: Arc<EmbeddedEngine>,
    schema: String,
    scratch: PathBuf,
    /// Temporary tables to keep at the end under other names (the result, the exports).
    keep: Vec<(String, String)>,
    /// Kept tables a last native stage left in the embedded database.
    local: Vec<(String, String)>,
    /// SQL steps held back until the next native stage or the end.
    pending: Vec<ScriptStep>,
    /// Embedded tables made to move layers, dropped after each stage.
    moved: Mutex<Vec<String>>,
    cancel: Arc<Cancel>,
    runtime: Handle,
}

/// A table name of its own in the embedded database, for a layer on its way.
fn moving_table() -> String {
    static MOVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = MOVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("__hybrid_{}_{n}", std::process::id())
}

/// The SRID of an `EPSG:<code>` CRS.
fn srid(crs: Option<&str>) -> Option<u32> {
    crs?.strip_prefix("EPSG:")?.parse().ok()
}

impl PostgisTables {
    /// Runs the held-back steps' statements one by one on one connection, keeping `keep` (temporary table, kept name).
    fn run_pending(&mut self, keep: &[(String, String)]) -> Result<(), BackendError> {
        let statements: Vec<String> = self
            .pending
            .iter()
            .flat_map(|s| s.parts.iter().cloned())
            .collect();
        self.pending.clear();
        let cancel = Arc::clone(&self.cancel);
        let stop = move || cancel.is_cancelled();
        self.runtime.block_on(
            self.postgis
                .run_script(&self.schema, &statements, keep, &stop),
        )
    }

    /// Drops the embedded tables made to move layers.
    fn drop_moved(&self) {
        let moved = self.moved.lock().map(|mut m| std::mem::take(&mut *m));
        for table in moved.unwrap_or_default() {
            let _ = self
                .embedded
                .execute_batch(&format!("DROP TABLE IF EXISTS {}", ident(&table)));
        }
    }
}

impl TableEngine for PostgisTables {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn sql(&mut self, step: &ScriptStep) -> Result<(), BackendError> {
        self.pending.push(step.clone());
        Ok(())
    }

    /// The tables of the SQL so far are kept under their own names for the stage after it.
    fn flush(&mut self) -> Result<(), BackendError> {
        let made: Vec<(String, String)> = self
            .pending
            .iter()
            .filter_map(|s| s.makes.clone())
            .map(|r| (r.clone(), r))
            .collect();
        self.run_pending(&made)
    }

    /// The last script also keeps the result and the exports under their names.
    fn finish(&mut self) -> Result<(), BackendError> {
        let keep = std::mem::take(&mut self.keep);
        self.run_pending(&keep)
    }

    fn read_layer(
        &self,
        table: &str,
        crs: Option<String>,
        columns: Option<&[String]>,
    ) -> Result<Layer, NativeError> {
        let local = moving_table();
        if let Ok(mut moved) = self.moved.lock() {
            moved.push(local.clone());
        }
        self.embedded
            .copy_from_postgis(self.postgis.dsn(), (&self.schema, table), &local)
            .map_err(|e| NativeError::Transfer(e.to_string()))?;
        let query = format!("SELECT {} FROM {}", select_list(columns), ident(&local));
        query_layer(&self.embedded, &query, GEOM, crs)
    }

    /// When the stage makes the run's last table and the caller keeps it, it stays in the
    /// embedded database ([`HybridOutcome::local`]): sending it to PostgreSQL only to read it
    /// back cost more than the stage's kernels (3,038 buffered regions: 2.6 s of a 5.6 s run).
    fn write_layer(
        &mut self,
        layer: &Layer,
        step: &ScriptStep,
        last: bool,
    ) -> Result<(), BackendError> {
        let relation = step
            .native
            .as_ref()
            .map_or("", |stage| stage.relation.as_str());
        let kept_here = last && self.keep.iter().any(|(table, _)| table == relation);
        let stored = if kept_here {
            let table = format!("__hybrid_result_{}", self.schema);
            store_layer(&self.embedded, layer, &table, &self.scratch)?;
            self.keep.retain(|(kept, name)| {
                let here = kept == relation;
                if here {
                    self.local.push((name.clone(), table.clone()));
                }
                !here
            });
            Ok(())
        } else {
            let local = moving_table();
            if let Ok(mut moved) = self.moved.lock() {
                moved.push(local.clone());
            }
            store_layer(&self.embedded, layer, &local, &self.scratch)?;
            self.embedded
                .copy_to_postgis(
                    self.postgis.dsn(),
                    &format!("SELECT * FROM {}", ident(&local)),
                    (&self.schema, relation),
                    srid(layer.crs.as_deref()),
                )
                .map(|_| ())
        };
        self.drop_moved();
        stored
    }

    fn stopped(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

impl HybridRun<'_> {
    /// Runs `steps`; `keep` names the temporary tables kept at the end under other names (the
    /// result, the exports). A run without native stages is one script, as on PostGIS. The
    /// walk runs on a blocking thread; PostGIS statements go through this runtime.
    pub async fn run_steps(
        &self,
        steps: &[ScriptStep],
        keep: &[(String, String)],
        cancel: Arc<Cancel>,
    ) -> Result<HybridOutcome, BackendError> {
        let mut tables = PostgisTables {
            postgis: self.postgis.clone(),
            embedded: Arc::clone(&self.embedded),
            schema: self.schema.to_owned(),
            scratch: self.scratch.to_path_buf(),
            keep: keep.to_vec(),
            local: Vec::new(),
            pending: Vec::new(),
            moved: Mutex::default(),
            cancel,
            runtime: Handle::current(),
        };
        let steps = steps.to_vec();
        super::engine::blocking(ENGINE, move || {
            let walked = walk(&mut tables, &steps, &OnThisMachine, &|_, _| {});
            tables.drop_moved();
            walked.map(|native| HybridOutcome {
                native,
                local: tables.local,
            })
        })
        .await
    }
}
