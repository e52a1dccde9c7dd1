//! Moving tables between the embedded DuckDB and PostGIS in bulk, through DuckDB's postgres
//! extension: binary COPY both ways, geometries arriving as PostGIS `geometry` and read back as
//! DuckDB `GEOMETRY`. Never row by row.

use std::sync::atomic::{AtomicU64, Ordering};

use duckdb::Connection;
use geomill_planner::sql::quote::{ident, string};

use super::EmbeddedEngine;
use super::engine::query_error;
use crate::BackendError;

/// Aliases of attached PostgreSQL databases are shared by every connection of a DuckDB
/// database, so each attachment gets a name of its own.
static ATTACHMENTS: AtomicU64 = AtomicU64::new(0);

/// A connection of its own with a PostgreSQL database attached, detached when dropped.
struct Attached {
    connection: Connection,
    alias: String,
}

impl Attached {
    fn new(connection: Connection, dsn: &str) -> Result<Self, BackendError> {
        let alias = format!("geomill_pg_{}", ATTACHMENTS.fetch_add(1, Ordering::Relaxed));
        let attach = format!(
            "LOAD postgres; ATTACH {} AS {} (TYPE postgres)",
            string(dsn),
            ident(&alias)
        );
        connection.execute_batch(&attach).map_err(|e| {
            // The statement holds the DSN (maybe a password): not kept in the error.
            BackendError::Unavailable {
                engine: "postgis",
                reason: format!("cannot reach PostgreSQL from DuckDB: {e}"),
            }
        })?;
        Ok(Self { connection, alias })
    }

    /// Runs `sql` in PostgreSQL as it is.
    fn execute_remote(&self, sql: &str) -> Result<(), BackendError> {
        let call = format!(
            "CALL postgres_execute({}, {})",
            string(&self.alias),
            string(sql)
        );
        self.connection
            .execute_batch(&call)
            .map_err(query_error(&call))
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = self
            .connection
            .execute_batch(&format!("DETACH {}", ident(&self.alias)));
    }
}

/// How many times a copy reads the attached catalog's schemas before it gives up.
const SCHEMA_READS: u32 = 4;

/// Whether DuckDB's error is the attached catalog not knowing a schema yet.
fn schema_unseen(error: &duckdb::Error) -> bool {
    let text = error.to_string();
    text.contains("Schema with name") && text.contains("not found")
}

/// Runs `statement`, which names a schema of the attached PostgreSQL database, after reading
/// the attached catalog afresh; read again (a few times at most) while DuckDB does not know the
/// schema, which a run at the same moment can cause by reading the catalog from a snapshot
/// older than the schema.
fn with_fresh_schemas(connection: &Connection, statement: &str) -> Result<(), BackendError> {
    for attempt in 1..=SCHEMA_READS {
        connection
            .execute("CALL pg_clear_cache()", [])
            .map_err(query_error("CALL pg_clear_cache()"))?;
        match connection.execute(statement, []) {
            Ok(_) => return Ok(()),
            Err(e) if attempt < SCHEMA_READS && schema_unseen(&e) => {
                std::thread::sleep(std::time::Duration::from_millis(50 * u64::from(attempt)));
            }
            Err(e) => return Err(query_error(statement)(e)),
        }
    }
    Ok(())
}

impl EmbeddedEngine {
    /// Copies the rows of `select` (a query over this database) into PostGIS as
    /// `schema.table`, replacing it; a `geom` column becomes `geometry(Geometry, srid)` with a
    /// GiST index. Answers the number of rows copied.
    pub fn copy_to_postgis(
        &self,
        dsn: &str,
        select: &str,
        (schema, table): (&str, &str),
        srid: Option<u32>,
    ) -> Result<i64, BackendError> {
        let pg = Attached::new(self.reader()?, dsn)?;
        let connection = &pg.connection;
        let qualified = format!("{}.{}", ident(schema), ident(table));
        pg.execute_remote(&format!(
            "CREATE SCHEMA IF NOT EXISTS {}; DROP TABLE IF EXISTS {qualified}",
            ident(schema)
        ))?;
        // The attached catalog's schema list may have been read (by this run or one at the
        // same moment) before the schema existed: read afresh, or the CREATE below cannot
        // find it.
        let create = format!(
            "CREATE TABLE {}.{qualified} AS SELECT * FROM ({select})",
            ident(&pg.alias)
        );
        with_fresh_schemas(connection, &create)?;
        let has_geometry = format!(
            "SELECT count(*) FROM (DESCRIBE SELECT * FROM ({select})) WHERE column_name = 'geom'"
        );
        let geometry_columns: i64 = connection
            .query_row(&has_geometry, [], |r| r.get(0))
            .map_err(query_error(&has_geometry))?;
        if geometry_columns > 0 {
            let srid = srid.unwrap_or(0);
            let index = ident(&format!("{table}_geom_idx"));
            pg.execute_remote(&format!(
                "{} CREATE INDEX {index} ON {qualified} USING gist (geom); ANALYZE {qualified}",
                typed_geometry_sql(&qualified, srid)
            ))?;
        }
        // DuckDB reports no changed rows for a table created in an attached PostgreSQL
        // database; counting the source reads no columns.
        let count = format!("SELECT count(*) FROM ({select})");
        connection
            .query_row(&count, [], |r| r.get(0))
            .map_err(query_error(&count))
    }

    /// Loads the PostGIS table `schema.source` into this database as the table `table`,
    /// replacing it (a `geometry` column arrives as `GEOMETRY`). Answers the number of rows.
    /// Declares the CRS (`EPSG:<code>`) of `table`'s `geom` column, if it has one: rows read
    /// out of PostgreSQL come with geometries of no CRS.
    pub fn declare_crs(&self, table: &str, crs: Option<&str>) -> Result<(), BackendError> {
        let Some(crs) = crs.filter(|crs| crs.starts_with("EPSG:")) else {
            return Ok(());
        };
        let has_geom = self.query_i64(&format!(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = {} AND column_name = 'geom'",
            string(table)
        ))?;
        if has_geom == 0 {
            return Ok(());
        }
        self.execute_batch(&format!(
            "ALTER TABLE {} ALTER COLUMN geom SET DATA TYPE GEOMETRY({})",
            ident(table),
            string(crs)
        ))
    }

    pub fn copy_from_postgis(
        &self,
        dsn: &str,
        (schema, source): (&str, &str),
        table: &str,
    ) -> Result<i64, BackendError> {
        let pg = Attached::new(self.reader()?, dsn)?;
        let connection = &pg.connection;
        let create = format!(
            "CREATE OR REPLACE TABLE {} AS SELECT * FROM {}.{}.{}",
            ident(table),
            ident(&pg.alias),
            ident(schema),
            ident(source)
        );
        with_fresh_schemas(connection, &create)?;
        let count = format!("SELECT count(*) FROM {}", ident(table));
        connection
            .query_row(&count, [], |r| r.get(0))
            .map_err(query_error(&count))
    }
}

/// PostgreSQL statements that give `table`'s `geom` column its type and SRID: `GeometryZ` when
/// a row has a Z (3D points of a point cloud; a 2D row of such a layer gets Z 0, as ogr2ogr
/// loads mixed layers), else `Geometry`. A typed column cannot hold both.
pub(crate) fn typed_geometry_sql(table: &str, srid: u32) -> String {
    format!(
        "DO $typed$ BEGIN \
           IF EXISTS (SELECT 1 FROM {table} WHERE ST_Zmflag(geom) >= 2) THEN \
             ALTER TABLE {table} ALTER COLUMN geom TYPE geometry(GeometryZ, {srid}) \
               USING ST_SetSRID(ST_Force3D(geom), {srid}); \
           ELSE \
             ALTER TABLE {table} ALTER COLUMN geom TYPE geometry(Geometry, {srid}) \
               USING ST_SetSRID(geom, {srid}); \
           END IF; \
         END $typed$;"
    )
}
