//! A run's statements as the executor walks them: each statement of the emitted script with
//! the table it makes and, for a stage the planner gave the native backend, that stage.

use geomill_planner::plan::Plan;
use geomill_planner::plan::operator::Operator;
use geomill_planner::sql::Script;

use geomill_native::stage::{NativeStage, StageTimings};

/// One statement of a run.
#[derive(Debug, Clone, Default)]
pub struct ScriptStep {
    /// The statement as shown (in errors and reports).
    pub sql: String,
    /// What runs: one SQL statement each, executed one by one as prepared statements (never as
    /// a batch).
    pub parts: Vec<String>,
    /// The table the statement makes (`None` for an export, which makes none).
    pub makes: Option<String>,
    /// A table whose rows are counted after the statement.
    pub count: Option<String>,
    /// Set when the statement's stage runs natively; `sql` then runs only if a kernel declines
    /// the data.
    pub native: Option<NativeStage>,
}

/// How a stage marked native ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeStepReport {
    /// The table the stage made.
    pub relation: String,
    /// `None`: by its kernels; otherwise why a kernel declined, and the stage ran as SQL.
    pub declined: Option<String>,
    /// Where the time of a stage its kernels ran went.
    pub timings: Option<StageTimings>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result_rows: i64,
    /// For each statement, the rows of the table it made, when asked to count.
    pub rows_after: Vec<Option<i64>>,
    /// The stages marked native, in order.
    pub native: Vec<NativeStepReport>,
}

/// The statements of `script` (emitted from `plan`) as a run's steps: each native statement
/// with its stage, each export marked as making no table, nothing counted.
pub fn steps_of(plan: &Plan, script: &Script) -> Vec<ScriptStep> {
    let exports: Vec<&str> = plan
        .graph
        .node_weights()
        .filter(|n| matches!(n.op, Operator::Export(_)))
        .map(|n| n.relation.as_str())
        .collect();
    script
        .statements
        .iter()
        .map(|s| ScriptStep {
            sql: s.sql.clone(),
            parts: s.parts.clone(),
            makes: (!exports.contains(&s.relation.as_str())).then(|| s.relation.clone()),
            count: None,
            native: s
                .native
                .as_ref()
                .and_then(|native| NativeStage::of(plan, native, &s.relation)),
        })
        .collect()
}
