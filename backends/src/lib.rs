//! geomill's execution: the engines (embedded DuckDB, feature `duckdb`; PostGIS, feature
//! `postgis`; the native kernels, feature `native`), the executor that hands a run's stages to
//! them, and the store (catalog and stored layers) kept in the embedded database and, in
//! persistent mode, PostgreSQL.
//!
//! Dependencies point one way: `store` → engines (their connections), `executor` → engines,
//! engines → the planner. No engine module imports another's.

pub mod bbox;
pub mod error;

/// Geometry code the embedded engine's SQL functions and the native kernels share.
#[cfg(any(feature = "duckdb", feature = "native"))]
pub mod geodesic;
#[cfg(any(feature = "duckdb", feature = "native"))]
pub mod wkb;

#[cfg(feature = "duckdb")]
pub mod duckdb;

#[cfg(feature = "postgis")]
pub mod postgis;

#[cfg(feature = "native")]
pub mod native;

#[cfg(all(feature = "duckdb", feature = "native"))]
pub mod executor;

#[cfg(feature = "duckdb")]
pub mod store;

pub use error::BackendError;
