//! The store's schema, in one place: the catalog tables (in the DuckDB file, or the dataset
//! catalog in PostgreSQL in persistent mode), the local `meta` tables each catalog module reads
//! and writes, and the tables PostgreSQL keeps for itself (projects, change tracking).

use geomill_planner::sql::quote::ident;

use super::Store;
use super::location::{PG_CATALOG_SCHEMA, PG_LAYER_SCHEMA, StoreLocation};
use crate::BackendError;
use crate::duckdb::query_error;

impl Store {
    /// Creates the catalog tables if they are missing.
    pub fn init_store(&self) -> Result<(), BackendError> {
        // Local work (jobs, rules, ...) always has its tables here; the dataset catalog too
        // unless it lives in PostgreSQL (created there when first attached).
        let local = "CREATE SCHEMA IF NOT EXISTS meta; CREATE SCHEMA IF NOT EXISTS layers;";
        let catalog = if self.location.is_postgis() {
            String::new()
        } else {
            catalog_ddl(&self.location)
        };
        let script = [
            local,
            &catalog,
            JOBS_DDL,
            PUBLISHED_DDL,
            RULES_DDL,
            STYLES_DDL,
            SCHEDULES_DDL,
            TRIGGERS_DDL,
            TRACKING_DDL,
            SCENARIOS_DDL,
        ]
        .join("\n");
        self.lock()?
            .execute_batch(&script)
            .map_err(query_error("catalog tables"))
    }
}

/// The catalog tables, created where the store lives when missing.
pub(super) fn catalog_ddl(location: &StoreLocation) -> String {
    // In PostgreSQL the statements run there, naming its own schema.
    let name = |table: &str| match location {
        StoreLocation::Embedded => location.catalog(table),
        StoreLocation::Postgis { .. } => format!("{PG_CATALOG_SCHEMA}.{}", ident(table)),
    };
    let (datasets, layers, remote) = (name("datasets"), name("layers"), name("remote_layers"));
    let tables = format!(
        "CREATE TABLE IF NOT EXISTS {datasets} (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    crs VARCHAR,
    path VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS {layers} (
    dataset_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    table_name VARCHAR NOT NULL,
    geometry_type VARCHAR,
    feature_count BIGINT,
    crs VARCHAR,
    PRIMARY KEY (dataset_id, name)
);
CREATE TABLE IF NOT EXISTS {remote} (
    dataset_id VARCHAR PRIMARY KEY,
    service_type VARCHAR NOT NULL,
    url VARCHAR NOT NULL,
    layer_name VARCHAR NOT NULL,
    loaded_at TIMESTAMP
);"
    );
    match location {
        StoreLocation::Embedded => {
            format!(
                "CREATE SCHEMA IF NOT EXISTS meta;\nCREATE SCHEMA IF NOT EXISTS layers;\n{tables}"
            )
        }
        StoreLocation::Postgis { .. } => format!(
            "CREATE SCHEMA IF NOT EXISTS {PG_CATALOG_SCHEMA};\nCREATE SCHEMA IF NOT EXISTS {PG_LAYER_SCHEMA};\n{tables}"
        ),
    }
}

/// The jobs and their states (read and written by `jobs.rs`).
const JOBS_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.jobs (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    dataset_id VARCHAR,
    document VARCHAR NOT NULL,
    vars VARCHAR NOT NULL,
    max_retries INTEGER NOT NULL,
    timeout_s BIGINT NOT NULL,
    attempts INTEGER NOT NULL,
    reason VARCHAR,
    error VARCHAR,
    result_path VARCHAR,
    result_features BIGINT,
    steps_executed INTEGER,
    created_at VARCHAR NOT NULL,
    started_at VARCHAR,
    completed_at VARCHAR
);
ALTER TABLE meta.jobs ADD COLUMN IF NOT EXISTS engine VARCHAR DEFAULT 'embedded';";

/// The results published as datasets (`published.rs`).
const PUBLISHED_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.published_results (
    job_id VARCHAR PRIMARY KEY,
    dataset_id VARCHAR
);";

/// The stored rules (`rules.rs`).
const RULES_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.rules (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    capability VARCHAR NOT NULL,
    config VARCHAR NOT NULL,
    config_key VARCHAR NOT NULL,
    scope VARCHAR,
    enabled BOOLEAN,
    created_at VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL
);";

/// The layers' styles (`styles.rs`).
const STYLES_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.styles (
    dataset_id VARCHAR NOT NULL,
    layer VARCHAR NOT NULL,
    style VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL,
    PRIMARY KEY (dataset_id, layer)
);";

/// The cron schedules (`schedules.rs`).
const SCHEDULES_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.schedules (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    cron VARCHAR NOT NULL,
    enabled BOOLEAN NOT NULL,
    job VARCHAR NOT NULL,
    next_run_at VARCHAR,
    last_run_at VARCHAR,
    last_job_id VARCHAR,
    created_at VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL
);";

/// The triggers (`triggers.rs`).
const TRIGGERS_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.triggers (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    enabled BOOLEAN NOT NULL,
    document VARCHAR NOT NULL,
    created_at VARCHAR NOT NULL,
    updated_at VARCHAR NOT NULL
);";

/// The change log of tracked layers on the embedded store (`tracking.rs`).
const TRACKING_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.tracked_layers (
    dataset_id VARCHAR NOT NULL,
    layer VARCHAR NOT NULL,
    enabled_at VARCHAR NOT NULL,
    PRIMARY KEY (dataset_id, layer)
);
CREATE SEQUENCE IF NOT EXISTS meta.change_log_ids;
CREATE TABLE IF NOT EXISTS meta.change_log (
    id BIGINT PRIMARY KEY DEFAULT nextval('meta.change_log_ids'),
    dataset_id VARCHAR NOT NULL,
    layer VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    fid VARCHAR,
    geom BLOB,
    logged_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    consumed BOOLEAN NOT NULL DEFAULT false
);";

/// The scenarios (`scenarios.rs`).
const SCENARIOS_DDL: &str = "
CREATE TABLE IF NOT EXISTS meta.scenarios (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    mode VARCHAR NOT NULL,
    nodes VARCHAR NOT NULL,
    created_at VARCHAR NOT NULL
);";

/// PostgreSQL's own tables (`postgres/`).
#[cfg(feature = "postgis")]
pub(crate) const PG_PROJECTS_DDL: &str = "
CREATE SCHEMA IF NOT EXISTS geomill;
CREATE TABLE IF NOT EXISTS geomill.projects (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE,
    schema_name text NOT NULL UNIQUE,
    description text,
    created_at timestamptz NOT NULL DEFAULT now()
);";

/// PostgreSQL's own tables (`postgres/`).
#[cfg(feature = "postgis")]
pub(crate) const PG_TRACKING_DDL: &str = r"
CREATE SCHEMA IF NOT EXISTS geomill;
CREATE TABLE IF NOT EXISTS geomill.change_log (
    id bigserial PRIMARY KEY,
    table_name text NOT NULL,
    op text NOT NULL,
    fid text,
    geom geometry,
    at timestamptz NOT NULL DEFAULT now(),
    consumed_at timestamptz
);
CREATE INDEX IF NOT EXISTS change_log_pending ON geomill.change_log (id) WHERE consumed_at IS NULL;
CREATE TABLE IF NOT EXISTS geomill.tracked_tables (
    table_name text PRIMARY KEY,
    schema_name text NOT NULL,
    relation text NOT NULL,
    geometry_column text,
    key_column text,
    dataset_id text,
    layer text,
    enabled_at timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE FUNCTION geomill.log_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed record;
    key text;
    shape geometry;
    log_id bigint;
    qualified text := TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME;
BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
    IF TG_ARGV[1] <> '' THEN
        EXECUTE format('SELECT ($1).%I::text', TG_ARGV[1]) INTO key USING changed;
    END IF;
    IF TG_ARGV[0] <> '' THEN
        EXECUTE format('SELECT ($1).%I::geometry', TG_ARGV[0]) INTO shape USING changed;
    END IF;
    INSERT INTO geomill.change_log (table_name, op, fid, geom)
        VALUES (qualified, TG_OP, key, shape) RETURNING id INTO log_id;
    PERFORM pg_notify('geomill_changes',
        json_build_object('id', log_id, 'table', qualified, 'op', TG_OP)::text);
    RETURN NULL;
END $$;";
