//! Running the planner's PostGIS scripts: every statement of a run on one connection, since its
//! stages are temporary tables of that session.

use std::time::Duration;

use geomill_planner::sql::quote::ident;

use super::engine::{ENGINE, PostgisEngine, query_error};
use crate::BackendError;

impl PostgisEngine {
    /// Runs `statements` (each one SQL statement, as the planner split them) in order on one
    /// connection whose unqualified names resolve in `schema` first, each as one prepared
    /// statement (PostgreSQL's extended protocol runs exactly one), then keeps each temporary
    /// table of `keep` as the ordinary table `schema.<kept name>`, so other connections can
    /// read it. The connection's temporary tables are dropped when the pool takes it back.
    /// `stop` is asked every 100 ms; when it says so, the running statement is cancelled on
    /// the server and the run ends `Interrupted`.
    pub async fn run_script(
        &self,
        schema: &str,
        statements: &[String],
        keep: &[(String, String)],
        stop: &(dyn Fn() -> bool + Send + Sync),
    ) -> Result<(), BackendError> {
        let client = self.client().await?;
        let search_path = format!("SET search_path TO {}, public", ident(schema));
        client
            .execute(&search_path, &[])
            .await
            .map_err(query_error(&search_path))?;
        let cancel = client.cancel_token();
        for statement in statements {
            let work = client.execute(statement.as_str(), &[]);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    done = &mut work => {
                        done.map_err(query_error(statement))?;
                        break;
                    }
                    () = tokio::time::sleep(Duration::from_millis(100)) => {
                        if stop() {
                            let _ = cancel.cancel_query(tokio_postgres::NoTls).await;
                            // The cancelled statement ends with an error; wait for it so the
                            // connection goes back to the pool idle.
                            let _ = work.await;
                            return Err(BackendError::Interrupted { engine: ENGINE });
                        }
                    }
                }
            }
        }
        for (table, kept) in keep {
            let kept = format!("{}.{}", ident(schema), ident(kept));
            for copy in [
                format!("DROP TABLE IF EXISTS {kept}"),
                format!("CREATE TABLE {kept} AS SELECT * FROM {}", ident(table)),
            ] {
                client
                    .execute(&copy, &[])
                    .await
                    .map_err(query_error(&copy))?;
            }
        }
        Ok(())
    }

    /// Runs `sql` (the engine's own statements without results: names quoted, no text from a
    /// request) on a connection of the pool. A run's steps go through [`Self::run_script`], one
    /// statement per call.
    pub async fn execute(&self, sql: &str) -> Result<(), BackendError> {
        self.client()
            .await?
            .batch_execute(sql)
            .await
            .map_err(query_error(sql))
    }

    /// Drops `schema` and everything in it (a run's scratch space), if it exists.
    pub async fn drop_schema(&self, schema: &str) -> Result<(), BackendError> {
        self.execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", ident(schema)))
            .await
    }
}
