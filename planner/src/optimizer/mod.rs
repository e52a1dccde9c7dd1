//! The optimizer: small rules, each rewriting the plan in place, run in the order of [`rules`],
//! each to its fixpoint. Rules that rewrite at single nodes share the walks of `walk.rs`. After
//! every change the schemas are re-inferred; after every rule the plan is re-checked and a broken
//! invariant is reported with the rule's name.

mod absorb_class_filter;
mod assign_engine;
mod bbox_prefilter;
mod constant_fold;
mod filter_pushdown;
mod fuse_stages;
mod prune_columns;
mod walk;

use serde::{Deserialize, Serialize};

use crate::error::PlanError;
use crate::plan::Plan;

pub use absorb_class_filter::AbsorbClassFilter;
pub use assign_engine::AssignEngine;
pub use bbox_prefilter::BboxPrefilter;
pub use constant_fold::ConstantFold;
pub use filter_pushdown::FilterPushdown;
pub use fuse_stages::FuseStages;
pub use prune_columns::PruneColumns;
pub use walk::{transform_down, transform_up};

/// The engine a pipeline runs on, the one engine name of geomill (run requests, jobs, the
/// command line, the planner's engine assignment of each node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EngineMode {
    /// DuckDB in-process, where the datasets are stored.
    #[default]
    Embedded,
    /// PostgreSQL + PostGIS (`GEOMILL_POSTGIS_DSN`): the layers the run reads are copied there
    /// in bulk (or read in place in persistent mode), and the result comes back the same way.
    Postgis,
    /// PostGIS for the data and the relational steps, the native backend for the heavy
    /// geometry steps (the cost rule of [`AssignEngine`]).
    Hybrid,
    /// The native backend's parallel kernels for the steps they compute (spatial joins and
    /// aggregates, nearest, per-feature geometry, dissolve, clip, erase), DuckDB in process for
    /// the relational rest.
    Native,
    /// The native engine with the kernels that partition (point-in-polygon aggregation) run on
    /// an Apache Ballista cluster (`GEOMILL_BALLISTA_URL`): the points in parts over its
    /// executors, the partial aggregates merged there; the other steps as `native` runs them, on
    /// the server.
    Distributed,
}

impl EngineMode {
    /// Every engine, in the order lists name them.
    pub const ALL: [Self; 5] = [
        Self::Embedded,
        Self::Native,
        Self::Postgis,
        Self::Hybrid,
        Self::Distributed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Embedded => "embedded",
            Self::Postgis => "postgis",
            Self::Native => "native",
            Self::Hybrid => "hybrid",
            Self::Distributed => "distributed",
        }
    }

    /// Whether the run's statements execute on PostgreSQL.
    pub fn on_postgis(self) -> bool {
        matches!(self, Self::Postgis | Self::Hybrid)
    }

    /// The mode an engine or dialect name stands for: `embedded` (or `duckdb`), `native`,
    /// `postgis` (or `postgres`, `postgresql`), `hybrid`, `distributed`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "duckdb" | "embedded" => Self::Embedded,
            "native" => Self::Native,
            "postgis" | "postgres" | "postgresql" => Self::Postgis,
            "hybrid" => Self::Hybrid,
            "distributed" => Self::Distributed,
            _ => return None,
        })
    }

    /// The dialect the mode's SQL statements are written in.
    pub fn dialect(self) -> crate::sql::Dialect {
        match self {
            Self::Embedded | Self::Native | Self::Distributed => crate::sql::Dialect::Duckdb,
            Self::Postgis | Self::Hybrid => crate::sql::Dialect::Postgis,
        }
    }
}

/// One rewrite. Rules that rewrite at single nodes walk the plan with [`transform_down`] or
/// [`transform_up`]; the optimizer runs each rule to a fixpoint ([`fixpoint`]).
pub trait OptimizerRule {
    fn name(&self) -> &'static str;
    /// One pass over the plan; `true` when something changed (the pass then runs again).
    fn rewrite(&self, plan: &mut Plan) -> Result<bool, PlanError>;
}

/// The rules, in order: simplify expressions, move filters towards the scans (again after bbox
/// pre-filters are added, so they sink too), prune columns, fold class filters into the grid
/// summaries that read them, then decide engines, then fuse what runs together.
pub fn rules(mode: EngineMode) -> Vec<Box<dyn OptimizerRule>> {
    vec![
        Box::new(ConstantFold),
        Box::new(FilterPushdown),
        Box::new(BboxPrefilter),
        Box::new(FilterPushdown),
        Box::new(PruneColumns),
        Box::new(AbsorbClassFilter),
        Box::new(AssignEngine { mode }),
        Box::new(FuseStages),
    ]
}

/// How many passes of one rule the optimizer runs at most (a rule that always reports a change
/// would otherwise loop).
const MAX_PASSES: usize = 64;

/// Runs `rule`'s passes until one changes nothing, then checks the plan's invariants.
pub fn fixpoint(rule: &dyn OptimizerRule, plan: &mut Plan) -> Result<(), PlanError> {
    for _ in 0..MAX_PASSES {
        if !rule.rewrite(plan)? {
            break;
        }
        plan.infer_schemas();
    }
    plan.check().map_err(|reason| PlanError::Optimizer {
        rule: rule.name(),
        reason,
    })
}

/// Runs every rule on `plan`, each to its fixpoint.
pub fn optimize(mut plan: Plan, mode: EngineMode) -> Result<Plan, PlanError> {
    for rule in rules(mode) {
        fixpoint(rule.as_ref(), &mut plan)?;
    }
    Ok(plan)
}

/// The single reader of `index`'s output, if it has exactly one and nothing else observes it
/// (the plan's result is observed by whoever runs the plan). Rules that move work across `index`
/// or fold it into its reader rely on this.
pub(crate) fn only_consumer(
    plan: &Plan,
    index: petgraph::stable_graph::NodeIndex,
) -> Option<petgraph::stable_graph::NodeIndex> {
    if plan.result == Some(index) {
        return None;
    }
    match plan.consumers(index).as_slice() {
        [one] if plan.graph.edges_connecting(index, *one).count() == 1 => Some(*one),
        _ => None,
    }
}
