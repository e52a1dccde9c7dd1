//! geomill's execution backends: the embedded DuckDB engine (feature `duckdb`), PostGIS (feature
//! `postgis`), the native kernels (feature `native`) and the hybrid dispatcher (all three).

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

#[cfg(all(feature = "duckdb", feature = "postgis", feature = "native"))]
pub mod hybrid;

pub use error::BackendError;
