//! The hybrid dispatcher: a run's statements on PostGIS, in order, with the stages the planner
//! gave the native backend run by its kernels in between. The SQL between two native stages
//! runs as one script on one connection; the tables it makes are kept as ordinary tables of
//! the run's schema, so that the native stage (reading through DuckDB's postgres extension)
//! and the scripts after it (on other connections of the pool) read them.

use std::path::Path;
use std::sync::Arc;

use crate::BackendError;
use crate::duckdb::{EmbeddedEngine, NativeStepReport, ScriptStep};
use crate::native::stage::Delivery;
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

/// What a hybrid run did: how each native stage ran, and the kept tables a last native stage
/// left in the embedded database instead of PostgreSQL (`(kept name, embedded table)`; the
/// caller writes them out and drops them).
#[derive(Debug, Default)]
pub struct HybridOutcome {
    pub native: Vec<NativeStepReport>,
    pub local: Vec<(String, String)>,
}

/// The statements as one script (one round trip).
fn script_text(steps: &[&ScriptStep]) -> String {
    steps.iter().map(|s| format!("{};\n", s.sql)).collect()
}

impl HybridRun<'_> {
    /// Runs `steps`; `keep` names the temporary tables kept at the end under other names (the
    /// result, the exports). `stop` is asked while SQL runs and between stages. A run without
    /// native stages is one script, as on PostGIS. When the last step making a table is a
    /// native stage, what `keep` wants of it stays in the embedded database
    /// ([`HybridOutcome::local`]): sending it to PostgreSQL only to read it back cost more than
    /// the stage's kernels (3,038 buffered regions: 2.6 s of a 5.6 s run).
    pub async fn run_steps(
        &self,
        steps: &[ScriptStep],
        keep: &[(String, String)],
        stop: &(dyn Fn() -> bool + Send + Sync),
    ) -> Result<HybridOutcome, BackendError> {
        let mut outcome = HybridOutcome::default();
        let mut keep = keep.to_vec();
        let mut pending: Vec<&ScriptStep> = Vec::new();
        for (position, step) in steps.iter().enumerate() {
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
            // Exports after it make no table on PostGIS (they are written from kept tables).
            let last = steps[position + 1..].iter().all(|s| s.makes.is_none());
            let kept_here = keep.iter().any(|(table, _)| *table == stage.relation);
            let delivery = if last && kept_here {
                Delivery::Local(format!("__hybrid_result_{}", self.schema))
            } else {
                Delivery::Postgis
            };
            let engine = self.embedded.clone();
            let dsn = self.postgis.dsn().to_owned();
            let schema = self.schema.to_owned();
            let scratch = self.scratch.to_path_buf();
            let stage_copy = stage.clone();
            let deliver = delivery.clone();
            let (declined, timings) = tokio::task::spawn_blocking(move || {
                crate::native::stage::run_on_postgis(
                    &engine,
                    &dsn,
                    &schema,
                    &stage_copy,
                    &scratch,
                    &deliver,
                )
            })
            .await
            .map_err(|e| BackendError::Query {
                engine: "native",
                reason: e.to_string(),
                sql: String::new(),
            })??;
            match (&declined, delivery) {
                (Some(_), _) => pending.push(step),
                (None, Delivery::Local(table)) => {
                    keep.retain(|(kept, name)| {
                        let here = *kept == stage.relation;
                        if here {
                            outcome.local.push((name.clone(), table.clone()));
                        }
                        !here
                    });
                }
                (None, Delivery::Postgis) => {}
            }
            outcome.native.push(NativeStepReport {
                relation: stage.relation.clone(),
                timings: declined.is_none().then_some(timings),
                declined,
            });
        }
        self.postgis
            .run_script(self.schema, &script_text(&pending), &keep, stop)
            .await?;
        Ok(outcome)
    }
}
