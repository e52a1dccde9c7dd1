//! geomill's query compiler: spec model, capability registry, logical plan, optimizer and SQL
//! emitters. Pure: no IO, no database, no async runtime.

pub mod capabilities;
pub mod compile;
pub mod cql2;
pub mod error;
pub mod expr;
pub mod gispulse;
pub mod jsonschema;
pub mod optimizer;
pub mod palettes;
pub mod plan;
pub mod schema;
pub mod spec;
pub mod sql;

pub use compile::{Planned, Preview, compile, document_sources, plan_document, preview};
pub use error::{PlanError, Problem};
