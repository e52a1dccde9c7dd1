//! The integration tests, as one binary (one link step instead of one per file): each file
//! is a module. Support code shared by them is `common`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod api_datasets;
mod api_examples;
mod api_execute;
mod api_exports;
mod api_fields;
mod api_foundation;
mod api_jobs;
mod api_planner;
mod api_remote_layers;
mod api_rules;
mod api_scenarios;
mod api_schedules;
mod api_sessions;
mod api_sql;
mod api_triggers;
mod architecture;
mod auth_flows;
mod auth_oidc;
mod auth_routes;
mod classification;
mod cli;
mod common;
mod docs_browser;
mod engines_equivalence;
mod events_ws;
mod golden_native;
mod golden_on_postgis;
mod golden_sql_on_duckdb;
mod hostile_uploads;
mod hybrid_mode;
mod map_browser;
mod ogc_api;
mod ogc_html_results;
mod ogc_tiles;
mod persistent_mode;
mod postgis_engine;
mod rate_limit;
mod real_files;
mod schemathesis;
mod sql_guard_corpus;
mod styles;
mod triggers_persistent;
mod triggers_postgis;
mod url_guard;
