//! The hybrid dispatcher: a run's statements on PostGIS, in order, with the stages the planner
//! gave the native backend run by its kernels in between. The SQL between two native stages
//! runs as one script on one connection; the tables it makes are kept as ordinary tables of
//! the run's schema, so that the native stage (reading through DuckDB's postgres extension)
//! and the scripts after it (on other connections of the pool) read them.

use std::path::Path;
use std::sync::Arc;

use crate::BackendError;
use crate::duckdb::{EmbeddedEngine, NativeStepReport, ScriptStep};
use crate::postgis::PostgisEngine;

/// Where and how a hybrid run executes.
pub struct HybridRun<'a> {
    pub postgis: &'a PostgisEngine,
    /// Moves rows between PostgreSQL and the kernels.
    pub embedded: Arc<EmbeddedEngine>,
    /// The schema the run's tables live in (first on the search path).
    pub schema: &'a str,
    /// Where the native stages write their temporary files.
    pub scratch: &'a Path,
}

/// The statements as one script (one round trip).
fn script_text(steps: &[&ScriptStep]) -> String {
    steps.iter().map(|s| format!("{};\n", s.sql)).collect()
}

impl HybridRun<'_> {
    /// Runs `steps`; `keep` names the temporary tables kept at the end under other names (the
    /// result, the exports). `stop` is asked while SQL runs and between stages. Answers how
    /// each native stage ran. A run without native stages is one script, as on PostGIS.
    pub async fn run_steps(
        &self,
        steps: &[ScriptStep],
        keep: &[(String, String)],
        stop: &(dyn Fn() -> bool + Send + Sync),
    ) -> Result<Vec<NativeStepReport>, BackendError> {
        let mut native = Vec::new();
        let mut pending: Vec<&ScriptStep> = Vec::new();
        for step in steps {
            let Some(stage) = &step.native else {
                pending.push(step);
                continue;
            };
            // The tables of the SQL so far are kept under their own names for the stage.
            let made: Vec<(String, String)> = pending
                .iter()
                .filter_map(|s| s.makes.clone())
                .map(|r| (r.clone(), r))
                .collect();
            self.postgis
                .run_script(self.schema, &script_text(&pending), &made, stop)
                .await?;
            pending.clear();
            if stop() {
                return Err(BackendError::Interrupted { engine: "postgis" });
            }
            let engine = self.embedded.clone();
            let dsn = self.postgis.dsn().to_owned();
            let schema = self.schema.to_owned();
            let scratch = self.scratch.to_path_buf();
            let stage_copy = stage.clone();
            let (declined, timings) = tokio::task::spawn_blocking(move || {
                crate::native::stage::run_on_postgis(&engine, &dsn, &schema, &stage_copy, &scratch)
            })
            .await
            .map_err(|e| BackendError::Query {
                engine: "native",
                reason: e.to_string(),
                sql: String::new(),
            })??;
            if declined.is_some() {
                pending.push(step);
            }
            native.push(NativeStepReport {
                relation: stage.relation.clone(),
                timings: declined.is_none().then_some(timings),
                declined,
            });
        }
        self.postgis
            .run_script(self.schema, &script_text(&pending), keep, stop)
            .await?;
        Ok(native)
    }
}
