//! geomill's execution: the engines (embedded DuckDB, feature `duckdb`; PostGIS, feature
//! `postgis`; the native kernels of the `geomill-native` crate, feature `native`), the executor
//! that hands a run's stages to them, and the store (catalog and stored layers) kept in the
//! embedded database and, in persistent mode, PostgreSQL.
//!
//! Dependencies point one way: `store` → engines (their connections), `executor` → engines,
//! engines → the planner. No engine module imports another's; the native kernels and the
//! shared geometry code (`geomill-geometry`) are crates of their own, so Cargo keeps them from
//! reaching back into the engines, the store or the executor.

pub mod bbox;
pub mod error;

#[cfg(feature = "duckdb")]
pub mod duckdb;

#[cfg(feature = "postgis")]
pub mod postgis;

#[cfg(all(feature = "duckdb", feature = "native"))]
pub mod executor;

#[cfg(feature = "duckdb")]
pub mod store;

pub use error::BackendError;
