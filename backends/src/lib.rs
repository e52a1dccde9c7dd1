//! geomill's execution backends: the embedded DuckDB engine (feature `duckdb`), PostGIS (feature
//! `postgis`), the native kernels (feature `native`) and the hybrid dispatcher (all three).

pub mod bbox;
pub mod error;

#[cfg(feature = "duckdb")]
pub mod duckdb;

#[cfg(feature = "postgis")]
pub mod postgis;

#[cfg(feature = "native")]
pub mod native;

#[cfg(all(feature = "duckdb", feature = "postgis", feature = "native"))]
pub mod hybrid;

pub use error::BackendError;
