//! SQL emitters for the DuckDB spatial and PostGIS dialects, and the quoting helpers.

pub mod dialect;
mod explode;
pub(crate) mod geo;
pub mod guard;
pub mod input;
mod nearest;
mod network;
mod network_layer;
mod overlay;
pub(crate) mod parts;
pub mod quote;
mod relational;
pub(crate) mod row_order;
mod script;
pub mod select;
mod validate;
mod validate_completeness;
mod validate_context;
mod validate_topology;

pub use dialect::Dialect;
pub use geo::DUCKDB_GEODESIC_BUFFER;
pub use script::{FgbIndex, NativeStatement, Script, Statement, duckdb_copy, emit};
pub use validate_topology::DUCKDB_IS_VALID_REASON;
