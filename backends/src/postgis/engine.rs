//! The connection pool, and what the engine reports of the database (for `/health`).

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::BackendError;

pub(crate) const ENGINE: &str = "postgis";
/// Longest wait for a connection (a new one, or a free one from the pool).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections kept at most.
const POOL_SIZE: usize = 16;

/// A pool of connections to one PostgreSQL database with PostGIS. Connections are made when
/// first needed, so the engine exists (and reports itself unavailable) while the database is
/// down, and works again once it is back.
#[derive(Clone)]
pub struct PostgisEngine {
    pool: Pool,
    dsn: String,
}

/// What the database says of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgisStatus {
    pub postgres_version: String,
    pub postgis_version: String,
}

impl std::fmt::Debug for PostgisEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The DSN may carry a password: never printed.
        f.debug_struct("PostgisEngine").finish_non_exhaustive()
    }
}

fn unavailable(reason: impl std::fmt::Display) -> BackendError {
    BackendError::Unavailable {
        engine: ENGINE,
        reason: reason.to_string(),
    }
}

pub(crate) fn query_error(sql: &str) -> impl Fn(tokio_postgres::Error) -> BackendError + '_ {
    move |e| {
        // A closed connection is the database going away, not the statement's fault.
        if e.is_closed() {
            return unavailable(format!("the connection to PostgreSQL was lost: {e}"));
        }
        let reason = e.as_db_error().map_or_else(
            || e.to_string(),
            |db| {
                raised_message(db.message())
                    .unwrap_or(db.message())
                    .to_owned()
            },
        );
        BackendError::Query {
            engine: ENGINE,
            reason,
            sql: sql.to_owned(),
        }
    }
}

/// The message a statement raised on purpose (`Dialect::raise` and `Dialect::fail`: a text
/// starting `geomill: ` cast to a type it cannot be, so PostgreSQL quotes it in its error,
/// `invalid input syntax for type integer: "geomill: ..."`), without PostgreSQL's wrapping.
fn raised_message(message: &str) -> Option<&str> {
    let start = message.find("\"geomill: ")? + 1;
    let end = message.rfind('"').filter(|end| *end > start)?;
    Some(&message[start..end])
}

impl PostgisEngine {
    /// A pool for `dsn` (`postgresql://user@host:port/db`, or a libpq key/value string). Only
    /// the DSN is checked here; nothing connects until the engine is used.
    pub fn new(dsn: &str) -> Result<Self, BackendError> {
        let mut config = tokio_postgres::Config::from_str(dsn).map_err(|e| BackendError::Open {
            engine: ENGINE,
            reason: format!("GEOMILL_POSTGIS_DSN is not a PostgreSQL connection string: {e}"),
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("geomill");
        // PostGIS sends a NOTICE for every invalid geometry `ST_IsValid` looks at (hundreds per
        // run on a real layer, each a log line); warnings and errors still come through.
        // Backslashes in '…' strings are plain characters, as the planner prints literals
        // (`quote::string` doubles quotes only), whatever the server's default says.
        let session = "-c client_min_messages=warning -c standard_conforming_strings=on";
        let options = match config.get_options() {
            Some(given) => format!("{given} {session}"),
            None => session.to_owned(),
        };
        config.options(&options);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                // Clean: a connection comes back without the temporary tables, settings and
                // LISTENs of its last user.
                recycling_method: RecyclingMethod::Clean,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| BackendError::Open {
                engine: ENGINE,
                reason: e.to_string(),
            })?;
        Ok(Self {
            pool,
            dsn: dsn.to_owned(),
        })
    }

    /// The connection string, for DuckDB's `ATTACH ... (TYPE postgres)`.
    pub fn dsn(&self) -> &str {
        &self.dsn
    }

    /// A connection from the pool; `Unavailable` when PostgreSQL cannot be reached.
    pub(crate) async fn client(&self) -> Result<Object, BackendError> {
        self.pool
            .get()
            .await
            .map_err(|e| unavailable(format!("cannot connect to PostgreSQL: {e}")))
    }

    /// Versions of PostgreSQL and PostGIS, read with a real query (the health check).
    pub async fn status(&self) -> Result<PostgisStatus, BackendError> {
        let client = self.client().await?;
        let sql = "SELECT current_setting('server_version'), postgis_lib_version()";
        let row = client.query_one(sql, &[]).await.map_err(query_error(sql))?;
        Ok(PostgisStatus {
            postgres_version: row.get(0),
            postgis_version: row.get(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::raised_message;

    #[test]
    fn a_raised_message_is_unwrapped_and_others_are_left_alone() {
        assert_eq!(
            raised_message(r#"invalid input syntax for type integer: "geomill: key "a" twice""#),
            Some(r#"geomill: key "a" twice"#)
        );
        assert_eq!(
            raised_message(r#"relation "geomill: runs natively" does not exist"#),
            Some("geomill: runs natively")
        );
        assert_eq!(raised_message(r#"relation "cities" does not exist"#), None);
        assert_eq!(raised_message(r#"column "geomill: x"#), None);
    }
}
