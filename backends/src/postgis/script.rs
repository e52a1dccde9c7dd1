//! Running the planner's PostGIS scripts: every statement of a run on one connection, since its
//! stages are temporary tables of that session.

use std::time::Duration;

use geomill_planner::sql::quote::ident;

use super::engine::{ENGINE, PostgisEngine, query_error};
use crate::BackendError;

impl PostgisEngine {
    /// Runs `script` (statements separated by `;`, as the planner emits them) on one
    /// connection whose unqualified names resolve in `schema` first, then keeps each temporary
    /// table of `keep` as the ordinary table `schema.<kept name>`, so other connections can read
    /// it. The connection's temporary tables are dropped when the pool takes it back.
    /// `stop` is asked every 100 ms; when it says so, the running statement is cancelled on
    /// the server and the run ends `Interrupted`.
    pub async fn run_script(
        &self,
        schema: &str,
        script: &str,
        keep: &[(String, String)],
        stop: &(dyn Fn() -> bool + Send + Sync),
    ) -> Result<(), BackendError> {
        let client = self.client().await?;
        let search_path = format!("SET search_path TO {}, public", ident(schema));
        client
            .batch_execute(&search_path)
            .await
            .map_err(query_error(&search_path))?;
        let cancel = client.cancel_token();
        let work = client.batch_execute(script);
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => {
                    done.map_err(query_error(script))?;
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
        for (table, kept) in keep {
            let copy = format!(
                "DROP TABLE IF EXISTS {schema}.{kept}; CREATE TABLE {schema}.{kept} AS SELECT * FROM {table}",
                schema = ident(schema),
                kept = ident(kept),
                table = ident(table)
            );
            client
                .batch_execute(&copy)
                .await
                .map_err(query_error(&copy))?;
        }
        Ok(())
    }

    /// Runs `sql` (one or more statements without results) on a connection of the pool.
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
