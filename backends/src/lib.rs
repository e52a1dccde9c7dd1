//! geomill's execution backends: the embedded DuckDB engine (feature `duckdb`), and later PostGIS,
//! the native kernels and the hybrid dispatcher.

pub mod error;

#[cfg(feature = "duckdb")]
pub mod duckdb;

pub use error::BackendError;
