//! The executor: the one seam every engine runs behind ([`Engine`]: a compiled run in, one
//! outcome out, stopped by one [`Cancel`]), and the walk over a planned run's statements that
//! hands each to its engine. SQL goes to
//! the engine that holds the run's tables (DuckDB for `embedded` and `native` runs, PostGIS
//! for `postgis` and `hybrid` runs); a stage the planner gave the native backend has its
//! inputs moved out of that engine as Arrow, runs by its kernels, and has its result stored
//! back as the table its SQL would have made. The engines never call each other: only this
//! module knows more than one of them.

mod arrow;
mod cancel;
mod embedded;
mod engine;
#[cfg(feature = "postgis")]
mod hybrid;
#[cfg(feature = "postgis")]
mod postgis_run;
mod steps;
mod walk;

pub use arrow::{query_layer, store_layer, table_layer};
pub use cancel::Cancel;
pub use embedded::{EmbeddedRuns, ResultFile, RunControl, run_embedded, run_on_connection};
pub use engine::{
    CompiledRun, Engine, EngineFuture, EngineOutcome, Progress, ResultSink, StatementRun,
};
#[cfg(feature = "postgis")]
pub use hybrid::{HybridOutcome, HybridRun};
#[cfg(feature = "postgis")]
pub use postgis_run::{ExportTarget, PostgisRun, PostgisRuns, PostgisSource, run_postgis};
pub use steps::{NativeStepReport, RunOutcome, ScriptStep, steps_of};
pub use walk::{TableEngine, walk};
