//! Field summaries of a stored layer: distinct values, statistics, and the values class breaks
//! are computed from.

use geomill_planner::sql::quote::ident;

use super::Store;
use super::records::LayerRecord;
use crate::BackendError;

const ENGINE: &str = "duckdb";

/// Statistics of a numeric field.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FieldStats {
    pub count: i64,
    pub nulls: i64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub stddev: Option<f64>,
    /// The 5th, 25th, 50th, 75th and 95th percentiles (continuous).
    pub quantiles: Vec<Option<f64>>,
}

fn failed(sql: &str) -> impl Fn(duckdb::Error) -> BackendError + '_ {
    move |e| BackendError::Query {
        engine: ENGINE,
        reason: e.to_string(),
        sql: sql.to_owned(),
    }
}

impl Store {
    /// The `limit` most frequent values of `field` as JSON `{value, count}` objects, and the
    /// number of distinct values.
    pub fn distinct_values(
        &self,
        layer: &LayerRecord,
        field: &str,
        limit: i64,
    ) -> Result<(i64, Vec<String>), BackendError> {
        let (table, column) = (self.location.layer(&layer.table_name), ident(field));
        let connection = self.connection()?;
        let total_sql = format!(
            "SELECT count(DISTINCT {column}) + max(CASE WHEN {column} IS NULL THEN 1 ELSE 0 END) FROM {table}"
        );
        let total: i64 = connection
            .query_row(&total_sql, [], |r| r.get::<_, Option<i64>>(0))
            .map_err(failed(&total_sql))?
            .unwrap_or(0);
        let sql = format!(
            "SELECT CAST(json_object('value', {column}, 'count', count(*)) AS VARCHAR) FROM {table} \
             GROUP BY {column} ORDER BY count(*) DESC, {column} NULLS LAST LIMIT ?"
        );
        let mut statement = connection.prepare(&sql).map_err(failed(&sql))?;
        let values = statement
            .query_map([limit], |r| r.get::<_, String>(0))
            .map_err(failed(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed(&sql))?;
        Ok((total, values))
    }

    /// Statistics of a numeric `field`.
    pub fn field_stats(
        &self,
        layer: &LayerRecord,
        field: &str,
    ) -> Result<FieldStats, BackendError> {
        let (table, c) = (self.location.layer(&layer.table_name), ident(field));
        let sql = format!(
            "SELECT count({c}), count(*) - count({c}), min({c}), max({c}), avg({c}), stddev_samp({c}), \
             quantile_cont({c}, 0.05), quantile_cont({c}, 0.25), quantile_cont({c}, 0.5), quantile_cont({c}, 0.75), quantile_cont({c}, 0.95) \
             FROM (SELECT CAST({c} AS DOUBLE) AS {c} FROM {table})"
        );
        self.connection()?
            .query_row(&sql, [], |r| {
                Ok(FieldStats {
                    count: r.get(0)?,
                    nulls: r.get(1)?,
                    min: r.get(2)?,
                    max: r.get(3)?,
                    mean: r.get(4)?,
                    stddev: r.get(5)?,
                    quantiles: vec![r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?],
                })
            })
            .map_err(failed(&sql))
    }

    /// The non-null values of a numeric `field`, sorted; at most `cap`, a reproducible sample
    /// when there are more.
    pub fn field_sample(
        &self,
        layer: &LayerRecord,
        field: &str,
        cap: i64,
    ) -> Result<Vec<f64>, BackendError> {
        let (table, c) = (self.location.layer(&layer.table_name), ident(field));
        let sql = format!(
            "SELECT v FROM (SELECT CAST({c} AS DOUBLE) AS v FROM {table} WHERE {c} IS NOT NULL ORDER BY hash({id}, 42) LIMIT ?) ORDER BY v",
            id = self.location.feature_id()
        );
        let connection = self.connection()?;
        let mut statement = connection.prepare(&sql).map_err(failed(&sql))?;
        let values = statement
            .query_map([cap], |r| r.get::<_, f64>(0))
            .map_err(failed(&sql))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed(&sql))?;
        Ok(values)
    }
}
