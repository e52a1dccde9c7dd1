//! The one seam every engine runs behind: a compiled run in (the plan, its script in the
//! engine's dialect, the stored layers its sources stand for, where the result goes, one
//! cancel, progress), one outcome out. The app compiles a request and hands it to the engine
//! the request names; how an engine walks the script (statement by statement through
//! [`super::TableEngine`], or otherwise) is its own business.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use geomill_planner::plan::Plan;
use geomill_planner::sql::{Dialect, Script};

use super::cancel::Cancel;
use super::steps::NativeStepReport;
use crate::BackendError;
use crate::store::Binding;

/// Told (statements done, statements) as a run goes.
pub type Progress = Arc<dyn Fn(usize, usize) + Send + Sync>;

/// Where a run's result goes: a GeoPackage written at `path` (the caller renames it once the
/// run succeeds), its geometry declared in the CRS the plan gives its result.
#[derive(Debug, Clone)]
pub struct ResultSink {
    pub path: PathBuf,
}

/// A run as every engine takes it.
pub struct CompiledRun {
    /// Names the run (scratch schemas, files).
    pub job_id: String,
    /// The plan, its export destinations already confined to the data directory.
    pub plan: Plan,
    /// The plan emitted in the engine's [`Engine::dialect`].
    pub script: Script,
    /// Each source name of the plan and the stored layer it stands for.
    pub sources: Vec<Binding>,
    pub sink: ResultSink,
    /// Count the rows of every table the script makes (step-by-step runs).
    pub count_each_step: bool,
    pub cancel: Arc<Cancel>,
    pub progress: Progress,
}

/// One statement of a run whose tables were counted.
#[derive(Debug, Clone)]
pub struct StatementRun {
    pub steps: Vec<String>,
    /// The table it made (or, for an export, read).
    pub relation: String,
    /// Rows of that table (none for exports).
    pub rows: Option<i64>,
    pub sql: String,
}

/// What every engine answers.
#[derive(Debug, Clone)]
pub struct EngineOutcome {
    pub result_rows: i64,
    /// The stages given to the native backend, in order, and how each ran.
    pub native: Vec<NativeStepReport>,
    /// With [`CompiledRun::count_each_step`]: every statement with its rows; else empty.
    pub statements: Vec<StatementRun>,
}

/// An engine's run in progress.
pub type EngineFuture<'a> =
    Pin<Box<dyn Future<Output = Result<EngineOutcome, BackendError>> + Send + 'a>>;

/// An engine runs compiled runs.
pub trait Engine: Send + Sync {
    /// How users know it, in messages ("the embedded engine", "PostGIS").
    fn name(&self) -> &'static str;
    /// The SQL dialect its script is emitted in.
    fn dialect(&self) -> Dialect;
    /// Whether it runs a plan as lowered and counts each statement's rows (step-by-step).
    fn counts_each_step(&self) -> bool;
    /// Runs `run`: the result written to its sink, the exports to their files.
    fn run(&self, run: CompiledRun) -> EngineFuture<'_>;
    /// Whether it writes a sink whose path ends in `.parquet` as GeoParquet (otherwise every
    /// sink is a GeoPackage).
    fn writes_geoparquet(&self) -> bool {
        false
    }
}

/// The statements of `script` with the rows counted after each.
pub(super) fn counted(script: &Script, rows_after: &[Option<i64>]) -> Vec<StatementRun> {
    script
        .statements
        .iter()
        .zip(rows_after)
        .map(|(s, rows)| StatementRun {
            steps: s.steps.clone(),
            relation: s.relation.clone(),
            rows: *rows,
            sql: s.sql.clone(),
        })
        .collect()
}

/// The CRS of the plan's result (`EPSG:<code>`), when the planner knows it.
pub(super) fn result_crs(plan: &Plan) -> Option<String> {
    plan.result
        .and_then(|index| plan.node(index))
        .and_then(|node| node.schema.as_ref())
        .and_then(|schema| schema.crs.clone())
}

/// The table the script's result is.
pub(super) fn result_table(script: &Script) -> Result<String, BackendError> {
    script
        .result
        .clone()
        .ok_or_else(|| BackendError::Unsupported("the plan has no result".into()))
}

/// Runs `work` on a blocking thread (DuckDB and the kernels never run on the async threads);
/// `engine` names the engine whose worker failed, if one does.
pub(super) async fn blocking<T: Send + 'static>(
    engine: &'static str,
    work: impl FnOnce() -> Result<T, BackendError> + Send + 'static,
) -> Result<T, BackendError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| BackendError::Query {
            engine,
            reason: format!("the run's worker thread failed: {e}"),
            sql: String::new(),
        })?
}
