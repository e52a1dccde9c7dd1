//! geomill's execution backends: the embedded DuckDB engine (feature `duckdb`), PostGIS (feature
//! `postgis`), and later the native kernels and the hybrid dispatcher.

pub mod error;

#[cfg(feature = "duckdb")]
pub mod duckdb;

#[cfg(feature = "postgis")]
pub mod postgis;

#[cfg(feature = "native")]
pub mod native;

pub use error::BackendError;
