//! geomill: a declarative geospatial processing engine with an HTTP API. The library holds the
//! whole app so that tests can build the router in-process; `main.rs` is only the CLI.

pub mod api;
pub mod auth;
pub mod blocking;
pub mod catalog;
pub mod cli;
pub mod cluster_cli;
pub mod config;
pub mod datasets;
pub mod error;
pub mod events;
pub mod examples;
pub mod execute;
pub mod jobs;
pub mod plan_cli;
pub mod query_string;
pub mod rules;
pub mod run_cli;
pub mod schedules;
pub mod sessions;
pub mod state;
pub mod styles;
pub mod telemetry;
pub mod tile_cache;
pub mod timestamp;
pub mod triggers;

/// The version reported by `/health`, `--version` and the OpenAPI document.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
