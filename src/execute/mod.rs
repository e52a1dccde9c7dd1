//! Running pipelines: planning against the stored layers, then executing on the engine the
//! request names (embedded DuckDB, or PostGIS with the data moved there in bulk).

pub(crate) mod postgis;
mod run;

pub use run::{Execution, RunRequest, StatementReport, run};
pub(crate) use run::{all_datasets, bind_loaded, bind_sources, stored_catalog};
