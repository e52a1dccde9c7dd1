//! Running pipelines: binding sources to the stored layers, planning against their schemas,
//! then handing the plan to the executor for the engine the request names, under a time-out.

mod deadline;
mod run;

pub use deadline::run_within;
pub(crate) use deadline::{spawn_run, stop_run};
pub use run::{Execution, RunRequest, StatementReport, run};
pub(crate) use run::{all_datasets, bind_loaded, bind_sources, stored_catalog};
