//! Change tracking on the embedded engine: which layers are tracked (`meta.tracked_layers`),
//! the change log of the writes geomill makes to them (`meta.change_log`, consumed once the
//! triggers have seen each entry), and the spatial test a trigger predicate runs on a layer.

use super::Store;
use crate::BackendError;
use crate::duckdb::query_error;

/// One row of a change: its feature id and its geometry as WKB (absent for a row without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedRow {
    pub fid: Option<String>,
    pub wkb: Option<Vec<u8>>,
}

/// A tracked layer and the log entries the triggers have not consumed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedLayer {
    pub layer: String,
    pub enabled_at: String,
    pub pending: i64,
}

impl Store {
    /// Starts tracking a layer (again): answers `false` when it was tracked already.
    pub fn track_layer(
        &self,
        dataset_id: &str,
        layer: &str,
        at: &str,
    ) -> Result<bool, BackendError> {
        let sql = "INSERT INTO meta.tracked_layers (dataset_id, layer, enabled_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING";
        let changed = self
            .connection()?
            .execute(sql, duckdb::params![dataset_id, layer, at])
            .map_err(query_error(sql))?;
        Ok(changed > 0)
    }

    /// Stops tracking a layer; `false` when it was not tracked.
    pub fn untrack_layer(&self, dataset_id: &str, layer: &str) -> Result<bool, BackendError> {
        let sql = "DELETE FROM meta.tracked_layers WHERE dataset_id = ? AND layer = ?";
        let changed = self
            .connection()?
            .execute(sql, [dataset_id, layer])
            .map_err(query_error(sql))?;
        Ok(changed > 0)
    }

    /// The tracked layers of a dataset, with their pending log entries.
    pub fn tracked_layers(&self, dataset_id: &str) -> Result<Vec<TrackedLayer>, BackendError> {
        let sql = "SELECT t.layer, t.enabled_at, (SELECT count(*) FROM meta.change_log c \
                   WHERE c.dataset_id = t.dataset_id AND c.layer = t.layer AND NOT c.consumed) \
                   FROM meta.tracked_layers t WHERE t.dataset_id = ? ORDER BY t.layer";
        let connection = self.connection()?;
        let mut statement = connection.prepare(sql).map_err(query_error(sql))?;
        let layers = statement
            .query_map([dataset_id], |r| {
                Ok(TrackedLayer {
                    layer: r.get(0)?,
                    enabled_at: r.get(1)?,
                    pending: r.get(2)?,
                })
            })
            .map_err(query_error(sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(sql))?;
        Ok(layers)
    }

    /// Logs a change of a tracked layer (nothing when the layer is not tracked); answers the
    /// ids of the log entries written.
    pub fn log_layer_change(
        &self,
        dataset_id: &str,
        layer: &str,
        op: &str,
        rows: &[ChangedRow],
    ) -> Result<Vec<i64>, BackendError> {
        let connection = self.connection()?;
        let tracked = "SELECT count(*) FROM meta.tracked_layers WHERE dataset_id = ? AND layer = ?";
        let count: i64 = connection
            .query_row(tracked, [dataset_id, layer], |r| r.get(0))
            .map_err(query_error(tracked))?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let sql = "INSERT INTO meta.change_log (dataset_id, layer, op, fid, geom) VALUES (?, ?, ?, ?, ?) RETURNING id";
        let mut ids = Vec::with_capacity(rows.len());
        for row in rows {
            let id: i64 = connection
                .query_row(
                    sql,
                    duckdb::params![dataset_id, layer, op, row.fid, row.wkb],
                    |r| r.get(0),
                )
                .map_err(query_error(sql))?;
            ids.push(id);
        }
        Ok(ids)
    }

    /// Marks log entries consumed.
    pub fn consume_changes(&self, ids: &[i64]) -> Result<(), BackendError> {
        let sql = "UPDATE meta.change_log SET consumed = true WHERE id = ?";
        let connection = self.connection()?;
        for id in ids {
            connection.execute(sql, [id]).map_err(query_error(sql))?;
        }
        Ok(())
    }

    /// Every row of a stored layer table: its row id and its geometry as WKB.
    pub fn layer_rows(&self, table_name: &str) -> Result<Vec<ChangedRow>, BackendError> {
        let sql = format!(
            "SELECT CAST({id} AS VARCHAR), ST_AsWKB(geom) FROM {} ORDER BY {id}",
            self.location.layer(table_name),
            id = self.location.feature_id()
        );
        let connection = self.reader()?;
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let rows = statement
            .query_map([], |r| {
                Ok(ChangedRow {
                    fid: r.get(0)?,
                    wkb: r.get(1)?,
                })
            })
            .map_err(query_error(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(&sql))?;
        Ok(rows)
    }

    /// Whether any feature of the stored layer table intersects the WKB geometry (taken in the
    /// layer's coordinates).
    pub fn layer_intersects(&self, table_name: &str, wkb: &[u8]) -> Result<bool, BackendError> {
        let sql = format!(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE ST_Intersects(geom, ST_GeomFromWKB(?)))",
            self.location.layer(table_name)
        );
        self.reader()?
            .query_row(&sql, [wkb], |r| r.get(0))
            .map_err(query_error(&sql))
    }
}

impl Store {
    /// A GeoJSON geometry as WKB (a `Query` error names what DuckDB refused).
    pub fn geojson_wkb(&self, geojson: &str) -> Result<Vec<u8>, BackendError> {
        let sql = "SELECT ST_AsWKB(ST_GeomFromGeoJSON(?))";
        self.reader()?
            .query_row(sql, [geojson], |r| r.get(0))
            .map_err(query_error(sql))
    }
}

/// One entry of the embedded change log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedLayerChange {
    pub id: i64,
    pub dataset_id: String,
    pub layer: String,
    /// `INSERT`, `UPDATE` or `DELETE`.
    pub op: String,
    pub row: ChangedRow,
}

impl Store {
    /// Up to `limit` log entries not consumed yet, oldest first.
    pub fn pending_layer_changes(
        &self,
        limit: i64,
    ) -> Result<Vec<LoggedLayerChange>, BackendError> {
        let sql = "SELECT id, dataset_id, layer, op, fid, geom FROM meta.change_log \
                   WHERE NOT consumed ORDER BY id LIMIT ?";
        let connection = self.connection()?;
        let mut statement = connection.prepare(sql).map_err(query_error(sql))?;
        let entries = statement
            .query_map([limit], |r| {
                Ok(LoggedLayerChange {
                    id: r.get(0)?,
                    dataset_id: r.get(1)?,
                    layer: r.get(2)?,
                    op: r.get(3)?,
                    row: ChangedRow {
                        fid: r.get(4)?,
                        wkb: r.get(5)?,
                    },
                })
            })
            .map_err(query_error(sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(query_error(sql))?;
        Ok(entries)
    }
}
