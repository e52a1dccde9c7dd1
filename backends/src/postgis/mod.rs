//! The PostGIS engine ("persistent mode"): PostgreSQL + PostGIS over a pool of tokio-postgres
//! connections. It runs the PostGIS SQL the planner emits; data moves in and out of it in bulk
//! through DuckDB's postgres extension (binary COPY), see `duckdb::postgres`. What PostgreSQL
//! stores (projects, change tracking, pages of stored layers) is the store's
//! (`store::postgres`).

mod engine;
mod script;

pub(crate) use engine::{ENGINE, query_error};
pub use engine::{PostgisEngine, PostgisStatus};
