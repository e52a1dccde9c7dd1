//! The PostGIS engine ("persistent mode"): PostgreSQL + PostGIS over a pool of tokio-postgres
//! connections. It runs the PostGIS SQL the planner emits; data moves in and out of it in bulk
//! through DuckDB's postgres extension (binary COPY), see `duckdb::postgres`.

mod engine;
#[cfg(feature = "duckdb")]
mod features;
mod projects;
mod script;
mod tracking;

pub use engine::{PostgisEngine, PostgisStatus};
pub use projects::{ProjectError, ProjectLayer, ProjectRecord, valid_project_name};
pub use tracking::{CHANNEL, ChangeListener, LoggedChange, TrackedTable, qualified};
