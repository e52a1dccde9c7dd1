//! Change tracking on PostgreSQL: a row trigger on a tracked table writes each change to
//! `geomill.change_log` and announces it with `pg_notify('geomill_changes', ...)`; consumers
//! read the entries not consumed yet and mark them consumed, so nothing is lost while no one
//! listens. Every identifier is quoted, never pasted.

use geomill_planner::sql::quote::{ident, string};

use super::PostgresStore;
use crate::BackendError;
use crate::postgis::query_error;
use crate::store::schema::PG_TRACKING_DDL;

/// The channel change notifications are sent on.
pub const CHANNEL: &str = "geomill_changes";

/// The row trigger's name on a tracked table.
const TRIGGER_NAME: &str = "geomill_track";

/// A table with change tracking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedTable {
    /// `schema.table`.
    pub table: String,
    pub geometry_column: Option<String>,
    pub key_column: Option<String>,
    /// The dataset layer the table stores, when it is one.
    pub dataset_id: Option<String>,
    pub layer: Option<String>,
    /// Log entries not consumed yet.
    pub pending: i64,
}

/// One entry of the change log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedChange {
    pub id: i64,
    /// `schema.table`.
    pub table: String,
    /// `INSERT`, `UPDATE` or `DELETE`.
    pub op: String,
    pub fid: Option<String>,
    /// The row's geometry as WKB, and its SRID.
    pub wkb: Option<Vec<u8>>,
    pub srid: Option<i32>,
}

/// Whether PostgreSQL refused a statement for naming a table that does not exist (the change
/// log before any table was tracked).
fn missing_relation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE)
}

/// `schema.table` as one text.
pub fn qualified(schema: &str, table: &str) -> String {
    format!("{schema}.{table}")
}

impl PostgresStore {
    async fn tracking_client(&self) -> Result<deadpool_postgres::Object, BackendError> {
        let client = self.postgis.client().await?;
        client
            .batch_execute(PG_TRACKING_DDL)
            .await
            .map_err(query_error(PG_TRACKING_DDL))?;
        Ok(client)
    }

    /// Installs the change log and the row trigger on `schema.table` (replacing an earlier
    /// one); `dataset_id` and `layer` say which dataset layer the table stores, if any.
    /// The geometry column is the table's first one, the key its primary key's first column.
    pub async fn enable_tracking(
        &self,
        schema: &str,
        table: &str,
        dataset: Option<(&str, &str)>,
    ) -> Result<TrackedTable, BackendError> {
        let mut client = self.tracking_client().await?;
        let exists = "SELECT to_regclass(format('%I.%I', $1::text, $2::text)) IS NOT NULL";
        let found: bool = client
            .query_one(exists, &[&schema, &table])
            .await
            .map_err(query_error(exists))?
            .get(0);
        if !found {
            return Err(BackendError::Query {
                engine: crate::postgis::ENGINE,
                reason: format!("no table {}", qualified(schema, table)),
                sql: exists.to_owned(),
            });
        }
        let geometry_sql = "SELECT f_geometry_column::text FROM geometry_columns \
                            WHERE f_table_schema = $1 AND f_table_name = $2 ORDER BY 1 LIMIT 1";
        let geometry: Option<String> = client
            .query_opt(geometry_sql, &[&schema, &table])
            .await
            .map_err(query_error(geometry_sql))?
            .map(|r| r.get(0));
        let key_sql = "SELECT a.attname::text FROM pg_index i \
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] \
            WHERE i.indisprimary AND i.indrelid = format('%I.%I', $1::text, $2::text)::regclass";
        let key: Option<String> = client
            .query_opt(key_sql, &[&schema, &table])
            .await
            .map_err(query_error(key_sql))?
            .map(|r| r.get(0));
        let name = qualified(schema, table);
        let target = format!("{}.{}", ident(schema), ident(table));
        let install = format!(
            "DROP TRIGGER IF EXISTS {trigger} ON {target};
             CREATE TRIGGER {trigger} AFTER INSERT OR UPDATE OR DELETE ON {target}
                 FOR EACH ROW EXECUTE FUNCTION geomill.log_change({geometry}, {key});",
            trigger = ident(TRIGGER_NAME),
            geometry = string(geometry.as_deref().unwrap_or_default()),
            key = string(key.as_deref().unwrap_or_default()),
        );
        let transaction = client.transaction().await.map_err(query_error("BEGIN"))?;
        transaction
            .batch_execute(&install)
            .await
            .map_err(query_error(&install))?;
        let record = "INSERT INTO geomill.tracked_tables \
            (table_name, schema_name, relation, geometry_column, key_column, dataset_id, layer) \
            VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (table_name) DO UPDATE SET \
            geometry_column = EXCLUDED.geometry_column, key_column = EXCLUDED.key_column, \
            dataset_id = EXCLUDED.dataset_id, layer = EXCLUDED.layer";
        let (dataset_id, layer) = dataset.unzip();
        transaction
            .execute(
                record,
                &[&name, &schema, &table, &geometry, &key, &dataset_id, &layer],
            )
            .await
            .map_err(query_error(record))?;
        transaction.commit().await.map_err(query_error("COMMIT"))?;
        Ok(TrackedTable {
            table: name,
            geometry_column: geometry,
            key_column: key,
            dataset_id: dataset_id.map(str::to_owned),
            layer: layer.map(str::to_owned),
            pending: 0,
        })
    }

    /// Removes the row trigger of `schema.table`; `false` when it was not tracked. Log entries
    /// written before stay and are still consumed.
    pub async fn disable_tracking(&self, schema: &str, table: &str) -> Result<bool, BackendError> {
        let mut client = self.tracking_client().await?;
        let transaction = client.transaction().await.map_err(query_error("BEGIN"))?;
        let forget = "DELETE FROM geomill.tracked_tables WHERE table_name = $1";
        let removed = transaction
            .execute(forget, &[&qualified(schema, table)])
            .await
            .map_err(query_error(forget))?;
        let exists = "SELECT to_regclass(format('%I.%I', $1::text, $2::text)) IS NOT NULL";
        let found: bool = transaction
            .query_one(exists, &[&schema, &table])
            .await
            .map_err(query_error(exists))?
            .get(0);
        if found {
            let drop = format!(
                "DROP TRIGGER IF EXISTS {} ON {}.{}",
                ident(TRIGGER_NAME),
                ident(schema),
                ident(table)
            );
            transaction
                .batch_execute(&drop)
                .await
                .map_err(query_error(&drop))?;
        }
        transaction.commit().await.map_err(query_error("COMMIT"))?;
        Ok(removed > 0)
    }

    /// Every tracked table with its pending log entries.
    pub async fn tracked_tables(&self) -> Result<Vec<TrackedTable>, BackendError> {
        let client = self.postgis.client().await?;
        let sql = "SELECT t.table_name, t.geometry_column, t.key_column, t.dataset_id, t.layer, \
            (SELECT count(*) FROM geomill.change_log c WHERE c.table_name = t.table_name AND c.consumed_at IS NULL) \
            FROM geomill.tracked_tables t ORDER BY t.table_name";
        let rows = match client.query(sql, &[]).await {
            Err(e) if missing_relation(&e) => return Ok(Vec::new()),
            other => other.map_err(query_error(sql))?,
        };
        Ok(rows
            .iter()
            .map(|r| TrackedTable {
                table: r.get(0),
                geometry_column: r.get(1),
                key_column: r.get(2),
                dataset_id: r.get(3),
                layer: r.get(4),
                pending: r.get(5),
            })
            .collect())
    }

    /// Up to `limit` log entries not consumed yet, oldest first.
    pub async fn pending_changes(&self, limit: i64) -> Result<Vec<LoggedChange>, BackendError> {
        let client = self.postgis.client().await?;
        let sql = "SELECT id, table_name, op, fid, ST_AsBinary(geom), ST_SRID(geom) \
                   FROM geomill.change_log WHERE consumed_at IS NULL ORDER BY id LIMIT $1";
        let rows = match client.query(sql, &[&limit]).await {
            Err(e) if missing_relation(&e) => return Ok(Vec::new()),
            other => other.map_err(query_error(sql))?,
        };
        Ok(rows
            .iter()
            .map(|r| LoggedChange {
                id: r.get(0),
                table: r.get(1),
                op: r.get(2),
                fid: r.get(3),
                wkb: r.get(4),
                srid: r.get(5),
            })
            .collect())
    }

    /// Marks log entries consumed.
    pub async fn consume_changes(&self, ids: &[i64]) -> Result<(), BackendError> {
        let client = self.postgis.client().await?;
        let sql = "UPDATE geomill.change_log SET consumed_at = now() WHERE id = ANY($1)";
        client
            .execute(sql, &[&ids])
            .await
            .map_err(query_error(sql))?;
        Ok(())
    }

    /// Whether any feature of `schema.table` (its first geometry column) intersects the WKB
    /// geometry, taken in `srid` (transformed to the table's SRID) or, when `srid` is unknown,
    /// in the table's coordinates. `None` when the table has no geometry column.
    pub async fn table_intersects(
        &self,
        schema: &str,
        table: &str,
        wkb: &[u8],
        srid: Option<i32>,
    ) -> Result<Option<bool>, BackendError> {
        let client = self.postgis.client().await?;
        let geometry_sql = "SELECT f_geometry_column::text, srid FROM geometry_columns \
                            WHERE f_table_schema = $1 AND f_table_name = $2 ORDER BY 1 LIMIT 1";
        let Some(row) = client
            .query_opt(geometry_sql, &[&schema, &table])
            .await
            .map_err(query_error(geometry_sql))?
        else {
            return Ok(None);
        };
        let column: String = row.get(0);
        let table_srid: i32 = row.get(1);
        let transform =
            matches!(srid, Some(srid) if srid > 0 && table_srid > 0 && srid != table_srid);
        let shape = if transform {
            "ST_Transform(ST_SetSRID(ST_GeomFromWKB($1::bytea), $3::int), $2::int)"
        } else {
            "ST_SetSRID(ST_GeomFromWKB($1::bytea), $2::int)"
        };
        let sql = format!(
            "SELECT EXISTS (SELECT 1 FROM {}.{} WHERE ST_Intersects({}, {shape}))",
            ident(schema),
            ident(table),
            ident(&column)
        );
        let given = srid.unwrap_or(0);
        let row = if transform {
            client.query_one(&sql, &[&wkb, &table_srid, &given]).await
        } else {
            client.query_one(&sql, &[&wkb, &table_srid]).await
        };
        let hit: bool = row.map_err(query_error(&sql))?.get(0);
        Ok(Some(hit))
    }

    /// A connection of its own that `LISTEN`s on [`CHANNEL`]. Its notifications' payloads
    /// come out of [`ChangeListener::next`], which answers `None` once the connection has ended
    /// (PostgreSQL went away).
    pub async fn listen_changes(&self) -> Result<ChangeListener, BackendError> {
        let (client, mut connection) = tokio_postgres::connect(self.dsn(), tokio_postgres::NoTls)
            .await
            .map_err(|e| BackendError::Unavailable {
                engine: crate::postgis::ENGINE,
                reason: format!("cannot connect to PostgreSQL: {e}"),
            })?;
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let message = std::future::poll_fn(|cx| connection.poll_message(cx)).await;
                match message {
                    Some(Ok(tokio_postgres::AsyncMessage::Notification(note))) => {
                        if sender.send(note.payload().to_owned()).is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => return,
                }
            }
        });
        let listen = format!("LISTEN {}", ident(CHANNEL));
        client
            .batch_execute(&listen)
            .await
            .map_err(query_error(&listen))?;
        Ok(ChangeListener {
            _client: client,
            receiver,
        })
    }
}

/// A listening connection (see [`PostgisEngine::listen_changes`]); dropping it closes it.
pub struct ChangeListener {
    /// Kept so the connection stays open.
    _client: tokio_postgres::Client,
    receiver: tokio::sync::mpsc::UnboundedReceiver<String>,
}

impl ChangeListener {
    /// The next notification's payload; `None` once the connection has ended.
    pub async fn next(&mut self) -> Option<String> {
        self.receiver.recv().await
    }
}
