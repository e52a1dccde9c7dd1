//! The one walk over a run's steps, whatever engine holds the run's tables: SQL steps go to
//! that engine; a stage the planner gave the native backend reads its inputs from it as Arrow
//! batches, runs by its kernels, and its result goes back to it as the table its SQL would
//! have made. A kernel that declines the data leaves the stage to its SQL.

use std::time::Instant;

use super::steps::{NativeStepReport, ScriptStep};
use crate::BackendError;
use geomill_native::stage::{Computed, NodeRunner, StageTimings, compute, compute_from_cloud};
use geomill_native::{Layer, NativeError};

/// The engine that holds a run's tables (DuckDB for `embedded` and `native` runs, PostGIS for
/// `postgis` and `hybrid` runs), as the walk sees it. Another engine (a distributed one, say)
/// joins the executor by implementing this.
pub trait TableEngine {
    /// The engine that is asked, in errors.
    fn name(&self) -> &'static str;
    /// Runs one SQL step, or holds it back to run with the next ones in one round trip (until
    /// [`TableEngine::flush`]).
    fn sql(&mut self, step: &ScriptStep) -> Result<(), BackendError>;
    /// Runs the steps held back (before a native stage reads their tables).
    fn flush(&mut self) -> Result<(), BackendError>;
    /// Runs the steps held back at the end of the walk, and whatever ends the run there.
    fn finish(&mut self) -> Result<(), BackendError>;
    /// A table of the run (or a bound source), by name and with its CRS, as Arrow batches.
    /// The table as a layer: its geometry and `columns` (`None`: every column).
    fn read_layer(
        &self,
        table: &str,
        crs: Option<String>,
        columns: Option<&[String]>,
    ) -> Result<Layer, NativeError>;
    /// Stores a native stage's result as the table `step` makes; `last`: no later step makes a
    /// table (only exports may follow).
    fn write_layer(
        &mut self,
        layer: &Layer,
        step: &ScriptStep,
        last: bool,
    ) -> Result<(), BackendError>;
    /// Whether the run was asked to stop.
    fn stopped(&self) -> bool;
    /// The LAS/LAZ file a bound source is read from, when it is one (a kernel that reduces
    /// points then streams the file instead of reading the table).
    fn point_cloud(&self, _table: &str) -> Option<std::path::PathBuf> {
        None
    }
}

/// Walks `steps` on `engine`, telling `progress` (steps done, steps) before each one; the
/// steps held back are run before each native stage and at the end ([`TableEngine::finish`]);
/// the nodes of native stages are computed by `nodes`. Answers how each native stage ran.
pub fn walk(
    engine: &mut dyn TableEngine,
    steps: &[ScriptStep],
    nodes: &dyn NodeRunner,
    progress: &(dyn Fn(usize, usize) + Send + Sync),
) -> Result<Vec<NativeStepReport>, BackendError> {
    let interrupted = |engine: &dyn TableEngine| BackendError::Interrupted {
        engine: engine.name(),
    };
    let mut reports = Vec::new();
    for (done, step) in steps.iter().enumerate() {
        if engine.stopped() {
            return Err(interrupted(engine));
        }
        progress(done, steps.len());
        let Some(stage) = &step.native else {
            engine.sql(step)?;
            continue;
        };
        engine.flush()?;
        if engine.stopped() {
            return Err(interrupted(engine));
        }
        let mut timings = StageTimings::default();
        let read = |table: &str, crs: Option<String>, columns: Option<&[String]>| {
            engine.read_layer(table, crs, columns)
        };
        let cloud = |table: &str| engine.point_cloud(table);
        let computed = match compute_from_cloud(stage, &cloud, &mut timings) {
            Some(streamed) => streamed,
            None => compute(stage, &read, nodes, &mut timings),
        };
        match computed {
            Ok(Computed::Layer(layer)) => {
                let storing = Instant::now();
                let last = steps[done + 1..].iter().all(|s| s.makes.is_none());
                engine.write_layer(&layer, step, last)?;
                timings.store = storing.elapsed();
                reports.push(NativeStepReport {
                    relation: stage.relation.clone(),
                    declined: None,
                    timings: Some(timings),
                });
            }
            Ok(Computed::Declined(reason)) => {
                reports.push(NativeStepReport {
                    relation: stage.relation.clone(),
                    declined: Some(reason),
                    timings: None,
                });
                engine.sql(step)?;
            }
            Err(error) => return Err(error.into()),
        }
    }
    engine.finish()?;
    if engine.stopped() {
        return Err(interrupted(engine));
    }
    Ok(reports)
}
