//! Running pipelines: binding sources to the stored layers, planning against their schemas,
//! then handing the plan to the executor for the engine the request names.

mod run;

pub use run::{Execution, RunRequest, StatementReport, run};
pub(crate) use run::{all_datasets, bind_loaded, bind_sources, stored_catalog};
